#include "core/data/make_data_source.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/common/error.h"

namespace sluice::data {
namespace {

config::LayerSpec layer(const std::string& type, int64_t outputs = 0) {
  config::LayerSpec spec;
  spec.type = config::find_layer_type(type).value();
  spec.outputs = outputs;
  return spec;
}

config::Config mlp_config() {
  config::Config config;
  config.model.inputs = 6;
  config.model.layers = {layer("linear", 16), layer("gelu"), layer("residual_mlp"), layer("linear", 4), layer("tanh")};
  config.data.type = config::DataType::kSynthetic;
  config.data.batch = 8;
  return config;
}

TEST(MakeDataSource, OutputWidthIsTheLastLinearLayers) {
  config::Config config = mlp_config();
  EXPECT_EQ(model_output_features(config.model), 4);
  config.model.layers = {layer("relu")};
  EXPECT_EQ(model_output_features(config.model), 6);
  config.model.layers = {layer("linear", 3), layer("custom")};
  EXPECT_EQ(model_output_features(config.model), -1);
  config.model.layers = {layer("custom"), layer("linear", 3)};
  EXPECT_EQ(model_output_features(config.model), 3);
}

TEST(MakeDataSource, SyntheticMatchesTheModelWidths) {
  const auto source = make_data_source(mlp_config());
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->input_features(), 6);
  EXPECT_EQ(source->target_features(), 4);
}

TEST(MakeDataSource, CrossEntropyGetsOneHotTargets) {
  config::Config config = mlp_config();
  config.loss = model::LossKind::kCrossEntropy;
  const auto source = make_data_source(config);
  std::vector<float> inputs(8 * 6), targets(8 * 4);
  source->batch(0, 0, 8, inputs.data(), targets.data());
  for (int r = 0; r < 8; ++r) {
    float sum = 0.0f;
    for (int j = 0; j < 4; ++j) sum += targets[r * 4 + j];
    EXPECT_EQ(sum, 1.0f) << "row " << r;
  }
}

TEST(MakeDataSource, CrossEntropyOnAFieldGetsOneHotTargetsAtEachPoint) {
  config::Config config;
  config.model.input_shape = {2, 3, 4};
  config.model.inputs = 24;
  config::LayerSpec conv = layer("conv");
  conv.channels = 3;
  conv.kernel = {1};
  config.model.layers = {conv};
  config.data.type = config::DataType::kSynthetic;
  config.loss = model::LossKind::kCrossEntropy;
  const auto source = make_data_source(config);
  ASSERT_EQ(source->target_features(), 36);
  std::vector<float> inputs(4 * 24), targets(4 * 36);
  source->batch(0, 0, 4, inputs.data(), targets.data());
  int classes_seen[3] = {0, 0, 0};
  for (int r = 0; r < 4; ++r) {
    for (int p = 0; p < 12; ++p) {  // channel c of point p at c * 12 + p
      float sum = 0.0f;
      for (int c = 0; c < 3; ++c) {
        const float v = targets[r * 36 + c * 12 + p];
        EXPECT_TRUE(v == 0.0f || v == 1.0f) << v;
        sum += v;
        classes_seen[c] += v == 1.0f;
      }
      EXPECT_EQ(sum, 1.0f) << "sample " << r << " point " << p;
    }
  }
  for (int c = 0; c < 3; ++c) EXPECT_GT(classes_seen[c], 0) << "class " << c;
}

// A field model's synthetic data is keyed by the global point (SyntheticFieldData): no dense map of the whole field,
// which for this field would be [2^23][2^23] floats, and any block of it can be generated alone.
TEST(MakeDataSource, FieldModelsOfAnySizeGetPointKeyedSyntheticData) {
  config::Config config;
  config.model.input_shape = {2, 2048, 2048};
  config.model.inputs = 2 * 2048 * 2048;
  config::LayerSpec conv = layer("conv");
  conv.channels = 2;
  conv.kernel = {1};
  config.model.layers = {conv};
  config.data.type = config::DataType::kSynthetic;
  const auto whole = make_data_source(config);
  EXPECT_EQ(whole->target_features(), 2 * 2048 * 2048);
  config.pipeline.domain = {64, 64};
  const auto block = make_data_source_for_block(config, 64 * 64 - 1);
  ASSERT_EQ(block->input_features(), 2 * 32 * 32);
  std::vector<float> inputs(2 * 32 * 32), targets(2 * 32 * 32);
  block->batch(0, 0, 1, inputs.data(), targets.data());
  EXPECT_NE(targets[0], targets[1]);
}

TEST(MakeDataSource, ExternalDataHasNoSource) {
  config::Config config = mlp_config();
  config.data.type = config::DataType::kExternal;
  EXPECT_EQ(make_data_source(config), nullptr);
}

TEST(MakeDataSource, CustomOutputLayerNeedsAnExplicitWidth) {
  config::Config config = mlp_config();
  config.model.layers.push_back(layer("custom"));
  try {
    make_data_source(config);
    ADD_FAILURE() << "synthetic data without a known output width";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig);
  }
  EXPECT_EQ(make_data_source(config, 9)->target_features(), 9);
}

TEST(MakeDataSource, Hdf5SourceChecksTheFile) {
  config::Config config = mlp_config();
  config.data.type = config::DataType::kHdf5;
  config.data.path = "/nonexistent/data.h5";
  try {
    make_data_source(config);
    ADD_FAILURE() << "missing HDF5 file accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(error.what()).find("/nonexistent/data.h5"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice::data
