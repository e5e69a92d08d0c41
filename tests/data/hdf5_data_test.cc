#include "core/data/hdf5_data.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "tests/data/hdf5_test_file.h"

namespace sluice::data {
namespace {

using test_hdf5::temp_path;
using test_hdf5::write_dataset;

constexpr int64_t kRows = 5;
constexpr int64_t kInputs = 3;
constexpr int64_t kTargets = 2;

// Row r of "inputs" holds 100r + j, row r of "targets" holds -(100r + j): every value says which file row it
// came from.
float input_value(int64_t row, int64_t j) { return static_cast<float>(100 * row + j); }
float target_value(int64_t row, int64_t j) { return -static_cast<float>(100 * row + j); }

std::string write_file(const std::string& name, int64_t rows = kRows, bool extras = false) {
  const std::string path = temp_path(name);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(file, 0) << path;
  std::vector<float> inputs, targets;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < kInputs; ++j) inputs.push_back(input_value(r, j));
    for (int64_t j = 0; j < kTargets; ++j) targets.push_back(target_value(r, j));
  }
  write_dataset(file, "inputs", H5T_NATIVE_FLOAT, {hsize_t(rows), kInputs}, inputs.data());
  write_dataset(file, "targets", H5T_NATIVE_FLOAT, {hsize_t(rows), kTargets}, targets.data());
  if (extras) {
    const std::vector<double> doubles(inputs.begin(), inputs.end());
    write_dataset(file, "inputs_f64", H5T_NATIVE_DOUBLE, {hsize_t(rows), kInputs}, doubles.data());
    write_dataset(file, "flat", H5T_NATIVE_FLOAT, {hsize_t(rows * kInputs)}, inputs.data());
    const std::vector<int> ints(inputs.size(), 1);
    write_dataset(file, "labels", H5T_NATIVE_INT, {hsize_t(rows), kInputs}, ints.data());
    write_dataset(file, "short_targets", H5T_NATIVE_FLOAT, {hsize_t(rows - 1), kTargets}, targets.data());
  }
  H5Fclose(file);
  return path;
}

// Error (code and message) from constructing Hdf5Data, or a test failure if it succeeds.
Error construction_error(const std::string& path, const std::string& inputs, const std::string& targets,
                         int64_t expected_inputs = kInputs, int64_t expected_targets = kTargets) {
  try {
    Hdf5Data data(path, inputs, targets, 4, expected_inputs, expected_targets);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "Hdf5Data accepted " << path << " " << inputs << " " << targets;
  return Error(ErrorCode::kInternal, "");
}

TEST(Hdf5Data, StepsWalkTheFileAndWrapAround) {
  Hdf5Data data(write_file("walk.h5"), "inputs", "targets", /*global_batch=*/4, kInputs, kTargets);
  EXPECT_EQ(data.rows_in_file(), kRows);
  EXPECT_EQ(data.input_features(), kInputs);
  EXPECT_EQ(data.target_features(), kTargets);
  // Step 1 of a batch of 4 covers rows 4, 5, 6, 7 -> file rows 4, 0, 1, 2; ask for global rows 1..3.
  std::vector<float> inputs(3 * kInputs), targets(3 * kTargets);
  data.batch(1, 1, 3, inputs.data(), targets.data());
  const int64_t expected_rows[] = {0, 1, 2};
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t j = 0; j < kInputs; ++j) EXPECT_EQ(inputs[r * kInputs + j], input_value(expected_rows[r], j));
    for (int64_t j = 0; j < kTargets; ++j) EXPECT_EQ(targets[r * kTargets + j], target_value(expected_rows[r], j));
  }
  // A slice longer than the file wraps more than once: step 2 starts at row 8 mod 5 = 3.
  std::vector<float> long_inputs(7 * kInputs), long_targets(7 * kTargets);
  data.batch(2, 0, 7, long_inputs.data(), long_targets.data());
  for (int64_t r = 0; r < 7; ++r) EXPECT_EQ(long_inputs[r * kInputs], input_value((8 + r) % kRows, 0)) << r;
}

TEST(Hdf5Data, ConvertsDoubleDatasets) {
  Hdf5Data data(write_file("f64.h5", kRows, true), "inputs_f64", "targets", 4, kInputs, kTargets);
  std::vector<float> inputs(kInputs), targets(kTargets);
  data.batch(0, 2, 1, inputs.data(), targets.data());
  EXPECT_EQ(inputs[1], input_value(2, 1));
}

// A NaN/Inf sample in the file (or a float64 value beyond the float range) is refused when its row is read, naming
// the file, the dataset, the row and the feature; the rows before it read fine.
TEST(Hdf5Data, NonFiniteSampleIsNamedWithFileDatasetAndRow) {
  const std::string path = temp_path("non_finite.h5");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<float> inputs(kRows * kInputs, 1.0f), targets(kRows * kTargets, 2.0f);
  inputs[3 * kInputs + 2] = std::numeric_limits<float>::quiet_NaN();
  std::vector<double> wide_targets(targets.begin(), targets.end());
  wide_targets[4 * kTargets + 1] = 1e300;  // finite as a double, inf as the float it is read as
  write_dataset(file, "inputs", H5T_NATIVE_FLOAT, {hsize_t(kRows), kInputs}, inputs.data());
  write_dataset(file, "targets", H5T_NATIVE_DOUBLE, {hsize_t(kRows), kTargets}, wide_targets.data());
  H5Fclose(file);
  Hdf5Data data(path, "inputs", "targets", 1, kInputs, kTargets);
  std::vector<float> x(kInputs), y(kTargets);
  data.batch(0, 0, 1, x.data(), y.data());  // row 0 is fine
  for (const auto& [step, needles] : std::vector<std::pair<int64_t, std::vector<std::string>>>{
           {3, {"non_finite.h5", "dataset \"inputs\"", "non-finite value (nan) in sample (row) 3, feature 2"}},
           {4, {"dataset \"targets\"", "non-finite value (inf) in sample (row) 4, feature 1"}}}) {
    try {
      data.batch(step, 0, 1, x.data(), y.data());
      ADD_FAILURE() << "row " << step << " was read";
    } catch (const Error& error) {
      for (const std::string& needle : needles) {
        EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
      }
    }
  }
}

TEST(Hdf5Data, MissingFileIsNamed) {
  const Error error = construction_error(temp_path("absent.h5"), "inputs", "targets");
  EXPECT_EQ(error.code(), ErrorCode::kIo);
  EXPECT_NE(std::string(error.what()).find("absent.h5\" does not exist"), std::string::npos) << error.what();
}

TEST(Hdf5Data, NonHdf5FileIsNamed) {
  const std::string path = temp_path("text.h5");
  FILE* file = std::fopen(path.c_str(), "w");
  std::fputs("not hdf5\n", file);
  std::fclose(file);
  EXPECT_NE(std::string(construction_error(path, "inputs", "targets").what()).find("is not an HDF5 file"),
            std::string::npos);
}

TEST(Hdf5Data, MissingDatasetListsWhatIsThere) {
  const Error error = construction_error(write_file("names.h5"), "inputz", "targets");
  EXPECT_EQ(error.code(), ErrorCode::kIo);
  EXPECT_NE(
      std::string(error.what()).find("dataset \"inputz\": not found (objects at the file's root: inputs, targets)"),
      std::string::npos)
      << error.what();
}

TEST(Hdf5Data, WrongRankTypeOrRowCountIsNamed) {
  const std::string path = write_file("bad.h5", kRows, true);
  EXPECT_NE(std::string(construction_error(path, "flat", "targets").what()).find("\"flat\": must be [rows][features] or [rows, channels, extents..]"),
            std::string::npos);
  EXPECT_NE(std::string(construction_error(path, "labels", "targets").what()).find("\"labels\": must hold floating"),
            std::string::npos);
  EXPECT_NE(std::string(construction_error(path, "inputs", "short_targets").what())
                .find("\"inputs\" has 5 rows but \"short_targets\" has 4"),
            std::string::npos);
}

TEST(Hdf5Data, FeatureCountsMustMatchTheModel) {
  const std::string path = write_file("widths.h5");
  const Error inputs = construction_error(path, "inputs", "targets", 32, kTargets);
  EXPECT_EQ(inputs.code(), ErrorCode::kConfig);
  EXPECT_NE(std::string(inputs.what()).find("\"inputs\" has 3 features per row but the model takes model.inputs = 32"),
            std::string::npos)
      << inputs.what();
  const Error targets = construction_error(path, "inputs", "targets", kInputs, 8);
  EXPECT_NE(std::string(targets.what()).find("\"targets\" has 2 features per row but the model outputs 8"),
            std::string::npos)
      << targets.what();
  EXPECT_NO_THROW(Hdf5Data(path, "inputs", "targets", 4, -1, -1));
}

// Fields: N-D datasets [N, C, D..] are read as the same memory as the model's [samples][C·ΠD] rows, and a field
// model refuses a dataset whose sample shape is not its own (even with the same number of values).
TEST(Hdf5Data, FieldDatasetsAreReadAsTheirSamples) {
  const std::string path = temp_path("fields.h5");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  std::vector<float> inputs(kRows * 2 * 3 * 4), targets(kRows * 5);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = static_cast<float>(i);
  for (size_t i = 0; i < targets.size(); ++i) targets[i] = -static_cast<float>(i);
  write_dataset(file, "u", H5T_NATIVE_FLOAT, {hsize_t(kRows), 2, 3, 4}, inputs.data());
  write_dataset(file, "y", H5T_NATIVE_FLOAT, {hsize_t(kRows), 5}, targets.data());
  H5Fclose(file);
  Hdf5Data data(path, "u", "y", 2, 24, 5);
  EXPECT_EQ(data.input_features(), 24);
  std::vector<float> in(2 * 24), out(2 * 5);
  data.batch(1, 0, 2, in.data(), out.data());  // rows 2 and 3
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(in[i], inputs[2 * 24 + i]) << i;
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], targets[2 * 5 + i]) << i;
  EXPECT_NO_THROW(data.require_sample_shapes({2, 3, 4}, {5}));
  EXPECT_NO_THROW(data.require_sample_shapes({24}, {5})) << "a rows model reads any layout of 24 values";
  try {
    data.require_sample_shapes({2, 4, 3}, {5});
    ADD_FAILURE() << "a [2, 4, 3] model accepted [2, 3, 4] samples";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConfig);
    EXPECT_NE(std::string(e.what()).find("\"u\" holds samples of shape [2, 3, 4] but the model takes fields of shape "
                                         "[2, 4, 3]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice::data
