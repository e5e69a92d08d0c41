// The layer vocabulary: the one name <-> type table, the width rule, and LayerSpec equality.
#include "core/config/layer_spec.h"
#include "core/config/sample_shape.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::config {
namespace {

TEST(LayerSpec, EveryTypeNameRoundTripsThroughTheTable) {
  const std::vector<std::string> expected = {"linear",        "relu",           "gelu",         "tanh",
                                             "layernorm",     "dropout",        "residual_mlp", "conv",
                                             "flatten",       "reshape",        "spectral_conv", "fno_block",
                                             "group_norm",    "instance_norm",
                                             "conv_transpose", "pool",          "upsample",     "concat",
                                             "add",           "patch_embed",    "transformer",  "unpatch",
                                             "custom"};
  EXPECT_EQ(layer_type_names(), expected);  // the order error messages list them in
  ASSERT_EQ(layer_types().size(), layer_type_names().size());
  for (size_t i = 0; i < layer_types().size(); ++i) {
    const LayerType type = layer_types()[i];
    EXPECT_EQ(layer_type_name(type), layer_type_names()[i]);
    ASSERT_TRUE(find_layer_type(layer_type_name(type)).has_value()) << layer_type_name(type);
    EXPECT_EQ(*find_layer_type(layer_type_name(type)), type);
  }
  EXPECT_FALSE(find_layer_type("conv2d").has_value());
  EXPECT_FALSE(find_layer_type("Linear").has_value());
  EXPECT_FALSE(find_layer_type("").has_value());
}

TEST(LayerSpec, ActivationTypesMapToTheKernelActivations) {
  EXPECT_EQ(activation_of(LayerType::kRelu), kernels::Activation::kRelu);
  EXPECT_EQ(activation_of(LayerType::kGelu), kernels::Activation::kGelu);
  EXPECT_EQ(activation_of(LayerType::kTanh), kernels::Activation::kTanh);
  for (LayerType type : layer_types()) {
    EXPECT_EQ(is_activation(type), type == LayerType::kRelu || type == LayerType::kGelu || type == LayerType::kTanh);
    // The activation layer's name is the kernel activation's name.
    if (is_activation(type)) {
      EXPECT_EQ(kernels::activation_name(activation_of(type)), layer_type_name(type));
    }
  }
  EXPECT_THROW(activation_of(LayerType::kLinear), Error);
}

LayerSpec of_type(LayerType type) {
  LayerSpec spec;
  spec.type = type;
  spec.outputs = 11;  // set on every kind: only linear may use it
  spec.hidden = 13;
  if (type == LayerType::kCustom) spec.name = "mine";  // a name on others would make them skip sources
  return spec;
}

TEST(LayerSpec, OutputWidthForEachKind) {
  for (LayerType type : layer_types()) {
    const LayerSpec spec = of_type(type);
    switch (type) {
      case LayerType::kLinear: EXPECT_EQ(output_width(spec, 7), 11); break;
      case LayerType::kCustom: EXPECT_EQ(output_width(spec, 7), -1) << "no custom widths: unknown"; break;
      case LayerType::kConv:
      case LayerType::kConvTranspose:
      case LayerType::kPool:
      case LayerType::kUpsample:
      case LayerType::kSpectralConv:
      case LayerType::kFnoBlock:
        EXPECT_THROW(output_width(spec, 7), Error) << layer_type_name(type) << " needs a field, not rows";
        break;
      case LayerType::kGroupNorm:
      case LayerType::kInstanceNorm:
        EXPECT_THROW(output_width(spec, 7), Error) << layer_type_name(type) << " needs a field, not rows";
        break;
      case LayerType::kConcat:
      case LayerType::kAdd:
        EXPECT_THROW(output_width(spec, 7), Error) << layer_type_name(type) << " reads a skip: needs a ShapeWalk";
        break;
      case LayerType::kReshape:
        EXPECT_THROW(output_width(spec, 7), Error) << "reshape without a shape of 7 values";
        break;
      case LayerType::kPatchEmbed:
      case LayerType::kTransformer:
      case LayerType::kUnpatch:
        EXPECT_THROW(output_width(spec, 7), Error) << layer_type_name(type) << " needs a field or tokens, not rows";
        break;
      default:
        EXPECT_EQ(output_width(spec, 7), 7) << layer_type_name(type);
        EXPECT_EQ(output_width(spec, -1), -1) << layer_type_name(type) << " keeps an unknown width unknown";
    }
  }
}

TEST(LayerSpec, CustomWidthsComeFromTheCallback) {
  std::string asked_name;
  int64_t asked_in = 0;
  const CustomWidths widths = [&](const std::string& name, int64_t in) {
    asked_name = name;
    asked_in = in;
    return in * 2;
  };
  EXPECT_EQ(output_width(of_type(LayerType::kCustom), 5, widths), 10);
  EXPECT_EQ(asked_name, "mine");
  EXPECT_EQ(asked_in, 5);
  // A callback may refuse (the C API's "not registered yet").
  const CustomWidths refuse = [](const std::string& name, int64_t) -> int64_t {
    throw Error(ErrorCode::kConfig, "custom layer '" + name + "' is not registered yet");
  };
  EXPECT_THROW(output_width(of_type(LayerType::kCustom), 5, refuse), Error);
  EXPECT_EQ(output_width(of_type(LayerType::kGelu), 5, refuse), 5) << "asked only for custom layers";
}

TEST(LayerSpec, OutputWidthOfAList) {
  std::vector<LayerSpec> layers = {of_type(LayerType::kLinear), of_type(LayerType::kGelu),
                                   of_type(LayerType::kResidualMlp), of_type(LayerType::kCustom),
                                   of_type(LayerType::kDropout)};
  const CustomWidths triple = [](const std::string&, int64_t in) { return 3 * in; };
  EXPECT_EQ(output_width(layers, 4, triple), 33);
  EXPECT_EQ(output_width(layers, 4), -1) << "a custom layer without widths makes the rest unknown";
  layers.push_back(of_type(LayerType::kLinear));
  layers.back().outputs = 2;
  EXPECT_EQ(output_width(layers, 4), 2) << "a later linear layer knows its width again";
  EXPECT_EQ(output_width(std::vector<LayerSpec>{}, 4), 4);
}

TEST(LayerSpec, EqualitySeesEveryFieldButTheLine) {
  LayerSpec base = of_type(LayerType::kResidualMlp);
  base.name = "mine";
  EXPECT_TRUE(base == base);
  EXPECT_FALSE(base != base);
  struct Change {
    std::string key;
    std::function<void(LayerSpec&)> apply;
    std::string was, is;
  };
  const std::vector<Change> changes = {
      {"type", [](LayerSpec& s) { s.type = LayerType::kLinear; }, "residual_mlp", "linear"},
      {"name", [](LayerSpec& s) { s.name = "other"; }, "mine", "other"},
      {"from", [](LayerSpec& s) { s.from = "e1"; }, "", "e1"},
      {"outputs", [](LayerSpec& s) { s.outputs = 12; }, "11", "12"},
      {"hidden", [](LayerSpec& s) { s.hidden = 14; }, "13", "14"},
      {"activation", [](LayerSpec& s) { s.activation = kernels::Activation::kRelu; }, "gelu", "relu"},
      {"p", [](LayerSpec& s) { s.p = 0.5; }, "0.000000", "0.500000"},
      {"eps", [](LayerSpec& s) { s.eps = 1e-6; }, "0.000010", "0.000001"},
      {"bias", [](LayerSpec& s) { s.bias = false; }, "true", "false"},
      {"patch", [](LayerSpec& s) { s.patch = {2, 4}; }, "[]", "[2, 4]"},
      {"dim", [](LayerSpec& s) { s.dim = 16; }, "0", "16"},
      {"heads", [](LayerSpec& s) { s.heads = 2; }, "0", "2"},
      {"mlp_ratio", [](LayerSpec& s) { s.mlp_ratio = 2; }, "4", "2"},
      {"grid", [](LayerSpec& s) { s.grid = {4, 4}; }, "[]", "[4, 4]"},
  };
  for (const Change& change : changes) {
    LayerSpec changed = base;
    change.apply(changed);
    EXPECT_FALSE(base == changed) << change.key;
    EXPECT_TRUE(base != changed) << change.key;
    const auto difference = first_difference(base, changed);
    ASSERT_TRUE(difference.has_value()) << change.key;
    EXPECT_EQ(difference->key, change.key);
    EXPECT_EQ(difference->was, change.was) << change.key;
    EXPECT_EQ(difference->is, change.is) << change.key;
  }
  // Values that print alike still differ.
  LayerSpec close = base;
  close.p = base.p + 1e-12;
  EXPECT_NE(base, close);
  // The line is where the entry was written, not what the layer is.
  LayerSpec moved = base;
  moved.line = 42;
  EXPECT_EQ(base, moved);
  EXPECT_FALSE(first_difference(base, moved).has_value());
}

TEST(LayerSpec, TheFirstDifferingFieldIsReported) {
  const LayerSpec base = of_type(LayerType::kLinear);
  LayerSpec changed = base;
  changed.bias = false;
  changed.outputs = 99;
  EXPECT_EQ(first_difference(base, changed)->key, "outputs");  // the order the checkpoint check names them in
}

}  // namespace
}  // namespace sluice::config
