// Data on blocks (issue 32): every block of an even split, generated or read by itself, placed back where its box
// says, gives the undecomposed source's samples bit for bit, synthetic and HDF5, 2-D and 3-D, even and uneven splits.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/domain_layout.h"
#include "core/data/make_data_source.h"
#include "tests/data/block_test_support.h"
#include "tests/data/hdf5_test_file.h"

namespace sluice::data {
namespace {

using namespace test_blocks;  // NOLINT(build/namespaces): the test's vocabulary
using config::DomainBox;
using config::SampleShape;

std::string split_text(const std::vector<int>& domain) {
  std::string text = "split [";
  for (size_t i = 0; i < domain.size(); ++i) text += (i ? ", " : "") + std::to_string(domain[i]);
  return text + "]";
}

// Every block of the even split `domain`, from make_data_source_for_block, placed back: every value written once,
// and the whole samples make_data_source gives, bit for bit.
void expect_blocks_assemble(config::Config config, const std::vector<int>& domain, int64_t step, int64_t first_row,
                            int64_t rows) {
  SCOPED_TRACE(split_text(domain));
  const SampleShape in = config::input_shape_of(config.model);
  const SampleShape out = config::output_shape(config.model.layers, in);
  const Batch whole = fetch(*make_data_source(config), step, first_row, rows);
  config.pipeline.domain = domain;
  const std::vector<int64_t> global(in.begin() + 1, in.end());
  const config::DomainLayout layout =
      config::even_domain_layout(global, domain, std::vector<int64_t>(global.size(), 1));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Batch assembled{std::vector<float>(whole.inputs.size(), nan), std::vector<float>(whole.targets.size(), nan)};
  std::vector<int> inputs_written(whole.inputs.size(), 0), targets_written(whole.targets.size(), 0);
  for (int64_t b = 0; b < layout.block_count(); ++b) {
    const auto source = make_data_source_for_block(config, b);
    ASSERT_NE(source, nullptr);
    const DomainBox box = layout.box(b);
    int64_t points = 1;
    for (int64_t e : box.extent) points *= e;
    EXPECT_EQ(source->input_features(), in[0] * points) << "block " << b;
    const Batch block = fetch(*source, step, first_row, rows);
    place(block.inputs, box, in, rows, assembled.inputs, inputs_written);
    place(block.targets, output_box(box, in, out), out, rows, assembled.targets, targets_written);
  }
  EXPECT_TRUE(std::all_of(inputs_written.begin(), inputs_written.end(), [](int n) { return n == 1; }));
  EXPECT_TRUE(std::all_of(targets_written.begin(), targets_written.end(), [](int n) { return n == 1; }));
  expect_same_bits(assembled.inputs, whole.inputs, "inputs");
  expect_same_bits(assembled.targets, whole.targets, "targets");
}

const std::vector<std::vector<int>> kSplits2D = {{1, 1}, {3, 1}, {1, 5}, {2, 4}, {3, 5}};
const std::vector<std::vector<int>> kSplits3D = {{3, 1, 1}, {1, 1, 4}, {3, 2, 4}, {2, 3, 5}};

TEST(BlockDataSource, SyntheticBlocksAreTheWholeSamples2D) {
  for (model::LossKind loss : {model::LossKind::kMse, model::LossKind::kCrossEntropy}) {
    config::Config config = field_config({2, 10, 12}, {conv(3)});
    config.loss = loss;
    for (const auto& split : kSplits2D) expect_blocks_assemble(config, split, 3, 2, 3);
  }
}

TEST(BlockDataSource, SyntheticBlocksAreTheWholeSamples3D) {
  const config::Config config = field_config({2, 10, 4, 7}, {conv(3), layer("gelu"), conv(2, 1)});
  for (const auto& split : kSplits3D) expect_blocks_assemble(config, split, 1, 0, 2);
}

// An output at another resolution than the input (pooled, upsampled): its block is the input block scaled.
config::LayerSpec avg_pool() {
  config::LayerSpec pool = layer("pool");
  pool.mode = "avg";
  pool.kernel = {2};
  return pool;
}

TEST(BlockDataSource, SyntheticBlocksOfARescaledOutput) {
  expect_blocks_assemble(field_config({2, 8, 12}, {conv(3), avg_pool()}), {2, 3}, 0, 0, 2);
  config::LayerSpec upsample = layer("upsample");
  upsample.factor = {2};
  expect_blocks_assemble(field_config({1, 10, 6}, {conv(2), upsample}), {3, 5}, 2, 1, 2);
}

// Every value says where it is: sample r, channel c, global point p of a field of P points holds
// r·1000 + c·P + p (+ 0.5 for targets).
std::vector<float> numbered(int64_t rows, const SampleShape& field, float shift) {
  int64_t features = 1;
  for (int64_t e : field) features *= e;
  std::vector<float> values(static_cast<size_t>(rows * features));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(static_cast<int64_t>(i) / features * 1000 + static_cast<int64_t>(i) % features) +
                shift;
  }
  return values;
}

std::vector<hsize_t> dims_of(int64_t rows, const SampleShape& field) {
  std::vector<hsize_t> dims{static_cast<hsize_t>(rows)};
  for (int64_t e : field) dims.push_back(static_cast<hsize_t>(e));
  return dims;
}

std::string write_fields(const std::string& name, int64_t rows, const SampleShape& in, const SampleShape& out,
                         const std::vector<float>& inputs, const std::vector<float>& targets) {
  const std::string path = test_hdf5::temp_path(name);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(file, 0) << path;
  test_hdf5::write_dataset(file, "inputs", H5T_NATIVE_FLOAT, dims_of(rows, in), inputs.data());
  test_hdf5::write_dataset(file, "targets", H5T_NATIVE_FLOAT, dims_of(rows, out), targets.data());
  H5Fclose(file);
  return path;
}

config::Config hdf5_config(const SampleShape& in, std::vector<config::LayerSpec> layers, const std::string& name,
                           int64_t rows = 5) {
  config::Config config = field_config(in, std::move(layers));
  const SampleShape out = config::output_shape(config.model.layers, in);
  config.data.type = config::DataType::kHdf5;
  config.data.path = write_fields(name, rows, in, out, numbered(rows, in, 0.0f), numbered(rows, out, 0.5f));
  return config;
}

// Step 1 of a batch of 4 over a 5-row file reads rows 4, 0, 1, .. (wrapping), each block its hyperslab.
TEST(BlockDataSource, Hdf5BlocksAreTheWholeSamples2D) {
  const config::Config config = hdf5_config({2, 10, 12}, {conv(3)}, "blocks2d.h5");
  for (const auto& split : kSplits2D) expect_blocks_assemble(config, split, 1, 0, 6);
}

TEST(BlockDataSource, Hdf5BlocksAreTheWholeSamples3D) {
  const config::Config config = hdf5_config({2, 10, 4, 7}, {conv(3)}, "blocks3d.h5");
  for (const auto& split : kSplits3D) expect_blocks_assemble(config, split, 0, 3, 3);
}

TEST(BlockDataSource, Hdf5BlocksOfARescaledOutput) {
  const config::Config config = hdf5_config({2, 8, 12}, {conv(3), avg_pool()}, "blocks_pooled.h5");
  for (const auto& split : std::vector<std::vector<int>>{{2, 3}, {4, 2}}) {
    expect_blocks_assemble(config, split, 2, 1, 3);
  }
}

std::string message_of(const std::function<void()>& call, ErrorCode code) {
  try {
    call();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), code) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

// A block read touches its hyperslab only: a NaN outside the block is not seen; inside it is named at its global
// point (sample, channel, point), with the file and the dataset.
TEST(BlockDataSource, Hdf5NonFiniteValuesAreNamedAtTheirGlobalPointOnlyByTheirBlock) {
  const SampleShape in{2, 10, 12}, out{3, 10, 12};
  std::vector<float> inputs(4 * 240, 1.0f), targets(4 * 360, 2.0f);
  inputs[2 * 240 + 1 * 120 + 8 * 12 + 3] = std::numeric_limits<float>::quiet_NaN();  // sample 2, channel 1, [8, 3]
  config::Config config = field_config(in, {conv(3)});
  config.data.type = config::DataType::kHdf5;
  config.data.path = write_fields("block_nan.h5", 4, in, out, inputs, targets);
  config.pipeline.domain = {3, 2};  // dimension 1: [0, 4) [4, 7) [7, 10); dimension 2: [0, 6) [6, 12)
  Batch batch;
  for (int64_t block : {0, 1, 2, 3, 5}) {
    const auto source = make_data_source_for_block(config, block);
    EXPECT_NO_THROW(batch = fetch(*source, 0, 0, 4)) << "block " << block << " read the NaN of block 4";
  }
  const std::string needle = "non-finite value (nan) in sample (row) 2, channel 1, point [8, 3]";
  const auto block4 = make_data_source_for_block(config, 4);
  const std::string message = message_of([&] { fetch(*block4, 0, 0, 4); }, ErrorCode::kIo);
  EXPECT_NE(message.find(needle), std::string::npos) << message;
  EXPECT_NE(message.find("block_nan.h5\", dataset \"inputs\""), std::string::npos) << message;
  EXPECT_NO_THROW(fetch(*block4, 0, 0, 2)) << "rows 0 and 1 hold no NaN";
  config.pipeline.domain = {};
  const std::string whole = message_of([&] { fetch(*make_data_source(config), 0, 0, 4); }, ErrorCode::kIo);
  EXPECT_NE(whole.find(needle), std::string::npos) << whole;
}

TEST(BlockDataSource, BadBoxesAreRefused) {
  const config::Config config = field_config({2, 10, 12}, {conv(3)});
  const DomainBox good{{4, 0}, {3, 12}};
  const auto refused = [&](const DomainBox& in, const DomainBox& out, ErrorCode code) {
    return message_of([&] { make_block_data_source(config, in, out); }, code);
  };
  const DomainBox beyond{{8, 0}, {3, 12}};
  EXPECT_NE(refused(beyond, beyond, ErrorCode::kInvalidArgument)
                .find("input block: the block (offset [8, 0] extent [3, 12]) spans points [8, 11) in spatial dimension "
                      "1, but the field [2, 10, 12] has [0, 10) there"),
            std::string::npos);
  const DomainBox empty{{4, 0}, {0, 12}};
  EXPECT_NE(refused(empty, empty, ErrorCode::kInvalidArgument).find("must be non-empty"), std::string::npos);
  const DomainBox flat{{4}, {3}};
  EXPECT_NE(refused(flat, flat, ErrorCode::kInvalidArgument).find("one offset and one extent per spatial dimension"),
            std::string::npos);
  EXPECT_NE(refused(good, DomainBox{{0, 0}, {3, 12}}, ErrorCode::kInvalidArgument)
                .find("the output block (offset [0, 0] extent [3, 12]) is not the input block's"),
            std::string::npos);
  EXPECT_NO_THROW(make_block_data_source(config, good, good));

  config::Config split = config;
  split.pipeline.domain = {3, 4};
  EXPECT_NE(message_of([&] { make_data_source_for_block(split, 12); }, ErrorCode::kInvalidArgument)
                .find("block 12 of a split into 12 blocks (0 .. 11)"),
            std::string::npos);
  split.pipeline.domain = {3};
  EXPECT_NE(message_of([&] { make_data_source_for_block(split, 0); }, ErrorCode::kConfig)
                .find("pipeline.domain has 1 entries but the model's input [2, 10, 12] has 2 spatial dimensions"),
            std::string::npos);
  split.pipeline.domain = {11, 1};
  EXPECT_NE(message_of([&] { make_data_source_for_block(split, 0); }, ErrorCode::kConfig).find("11 blocks"),
            std::string::npos);
}

TEST(BlockDataSource, ModelsWithoutFieldsOrWholeOutputBlocksAreRefused) {
  config::LayerSpec linear = layer("linear");
  linear.outputs = 4;
  config::Config rows = field_config({2, 10, 12}, {conv(3), layer("flatten"), linear});
  EXPECT_NE(message_of([&] { make_data_source_for_block(rows, 0); }, ErrorCode::kConfig)
                .find("the model takes [2, 10, 12] and gives rows of 4 features"),
            std::string::npos);
  config::LayerSpec pool = layer("pool");
  pool.mode = "max";
  pool.kernel = {2};
  config::Config pooled = field_config({2, 10, 12}, {pool});
  pooled.pipeline.domain = {3, 1};  // [0, 4) [4, 7) [7, 10): 7 input points are 3.5 output points
  EXPECT_NE(message_of([&] { make_data_source_for_block(pooled, 1); }, ErrorCode::kConfig)
                .find("the input block's points [4, 7) there are no whole block of the output"),
            std::string::npos);
}

TEST(BlockDataSource, Hdf5BlocksNeedFieldShapedDatasets) {
  config::Config config = field_config({2, 10, 12}, {conv(3)});
  config.data.type = config::DataType::kHdf5;
  config.data.path = test_hdf5::temp_path("block_flat.h5");
  const std::vector<float> inputs(3 * 240, 1.0f), targets(3 * 360, 2.0f);
  const hid_t file = H5Fcreate(config.data.path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  test_hdf5::write_dataset(file, "inputs", H5T_NATIVE_FLOAT, {3, 240}, inputs.data());
  test_hdf5::write_dataset(file, "targets", H5T_NATIVE_FLOAT, {3, 3, 10, 12}, targets.data());
  H5Fclose(file);
  EXPECT_NO_THROW(make_data_source(config)) << "the whole sample reads a flat dataset";
  config.pipeline.domain = {2, 1};
  EXPECT_NE(message_of([&] { make_data_source_for_block(config, 0); }, ErrorCode::kConfig)
                .find("dataset \"inputs\" is stored as [rows][features] ([240] per sample); reading one block of "
                      "each sample needs the samples' field shape"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::data
