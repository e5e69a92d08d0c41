// The builder: layer types and widths from the config, deterministic partition-independent init, custom
// layers through the registry, and errors that name the layer and its line.
#include "core/model/builder.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "core/model/activation_layer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/test_support.h"

namespace sluice::model {
namespace {

using testing::bits_equal;
using testing::layer_spec;

config::LayerSpec at_line(config::LayerSpec spec, int line) {
  spec.line = line;
  return spec;
}

config::ModelSpec small_model() {
  config::ModelSpec spec;
  spec.inputs = 5;
  config::LayerSpec linear = layer_spec("linear");
  linear.outputs = 7;
  config::LayerSpec mlp = layer_spec("residual_mlp");
  mlp.hidden = 9;
  config::LayerSpec dropout = layer_spec("dropout");
  dropout.p = 0.2;
  config::LayerSpec head = layer_spec("linear");
  head.outputs = 2;
  spec.layers = {linear, layer_spec("tanh"), mlp, layer_spec("layernorm"), dropout, head};
  return spec;
}

std::string build_error(const config::ModelSpec& spec, const CustomLayerRegistry& registry = {}) {
  try {
    build_layers(spec, kernels::cpu_backend(), registry);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  return "no error";
}

TEST(Builder, BuildsTypesWidthsAndGlobalIndices) {
  const auto layers = build_layers(small_model(), kernels::cpu_backend());
  ASSERT_EQ(layers.size(), 6u);
  const std::vector<std::string> types = {"linear", "tanh", "residual_mlp", "layernorm", "dropout", "linear"};
  const std::vector<int64_t> outputs = {7, 7, 7, 7, 7, 2};
  int64_t width = 5;
  for (size_t i = 0; i < layers.size(); ++i) {
    EXPECT_EQ(layers[i]->type(), types[i]);
    EXPECT_EQ(layers[i]->in_features(), width);
    EXPECT_EQ(layers[i]->out_features(), outputs[i]);
    EXPECT_EQ(layers[i]->global_index(), static_cast<int>(i));
    width = outputs[i];
  }
  ASSERT_EQ(layers[2]->parameters().size(), 4u);
  EXPECT_EQ(layers[2]->parameters()[2]->qualified_name(), "layers.2.fc2.weight");
  EXPECT_EQ(layers[2]->parameters()[0]->value.rows(), 9);  // fc1: [hidden][features]
}

TEST(Builder, InitIsDeterministicSeedDependentAndPartitionIndependent) {
  auto a = build_layers(small_model(), kernels::cpu_backend());
  auto b = build_layers(small_model(), kernels::cpu_backend());
  auto c = build_layers(small_model(), kernels::cpu_backend());
  init_layers(a, 7);
  b[5]->init(7);  // a rank that owns only the last layer initialises only it
  init_layers(c, 8);
  EXPECT_TRUE(bits_equal(a[5]->parameters()[0]->value, b[5]->parameters()[0]->value));
  EXPECT_FALSE(bits_equal(a[5]->parameters()[0]->value, c[5]->parameters()[0]->value));
  // Two layers with the same shape still differ: the global index is part of the key.
  EXPECT_FALSE(bits_equal(a[0]->parameters()[1]->value, a[2]->parameters()[3]->value));
  const float bound = 1.0f / std::sqrt(7.0f);
  for (float value : a[5]->parameters()[0]->value.to_vector()) EXPECT_LE(std::fabs(value), bound);
}

// Layer entries are checked by the config parser only (tests/config/config_parser_test.cc,
// RefusesLayerSettingsTheModelCannotUse); the builder checks what a custom layer's factory returns.

TEST(Builder, WidthsFollowTheSharedWidthRule) {
  const config::ModelSpec spec = small_model();
  const auto layers = build_layers(spec, kernels::cpu_backend());
  int64_t width = spec.inputs;
  for (size_t i = 0; i < layers.size(); ++i) {
    width = config::output_width(spec.layers[i], width);
    EXPECT_EQ(layers[i]->out_features(), width) << "layer " << i;
  }
  EXPECT_EQ(config::output_width(spec.layers, spec.inputs), layers.back()->out_features());
}

TEST(Builder, CustomLayersComeFromTheRegistry) {
  config::ModelSpec spec = small_model();
  config::LayerSpec custom = at_line(layer_spec("custom"), 11);
  custom.name = "my_relu";
  spec.layers.insert(spec.layers.begin() + 1, custom);
  int64_t seen_width = 0;
  CustomLayerRegistry registry;
  registry["my_relu"] = [&](int64_t in_features) {
    seen_width = in_features;
    return std::make_unique<ActivationLayer>(kernels::cpu_backend(), kernels::Activation::kRelu, in_features);
  };
  const auto layers = build_layers(spec, kernels::cpu_backend(), registry);
  EXPECT_EQ(seen_width, 7);
  EXPECT_EQ(layers[1]->type(), "relu");
  EXPECT_EQ(layers[1]->global_index(), 1);

  config::ModelSpec unknown = spec;
  unknown.layers[1].name = "missing_layer";
  const std::string message = build_error(unknown, registry);
  EXPECT_NE(message.find("model.layers[1] (line 11)"), std::string::npos) << message;
  EXPECT_NE(message.find("'missing_layer'"), std::string::npos) << message;

  registry["my_relu"] = [](int64_t) {
    return std::make_unique<ActivationLayer>(kernels::cpu_backend(), kernels::Activation::kRelu, 3);
  };
  EXPECT_NE(build_error(spec, registry).find("takes 3 inputs but the previous layer gives 7"), std::string::npos);
}

}  // namespace
}  // namespace sluice::model
