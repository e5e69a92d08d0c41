// The config-only model shape agrees with the built layers: the same widths, parameter counts and per-sample
// FLOPs (so the partition and the rank-order choice computed before building see the model that is built),
// for every built-in layer type and a custom layer with parameters of its own.
#include "core/model/model_shape.h"

#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/model/linear_layer.h"
#include "core/model/partition.h"
#include "core/model/stage_widths.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/test_support.h"

namespace sluice::model {
namespace {

using testing::layer_spec;

config::ModelSpec every_layer_type() {
  config::ModelSpec spec;
  spec.inputs = 6;
  config::LayerSpec linear = layer_spec("linear");
  linear.outputs = 10;
  config::LayerSpec no_bias = layer_spec("linear");
  no_bias.outputs = 4;
  no_bias.bias = false;
  config::LayerSpec mlp = layer_spec("residual_mlp");
  mlp.hidden = 9;
  config::LayerSpec custom = layer_spec("custom");
  custom.name = "dense";
  spec.layers = {linear,           layer_spec("relu"), layer_spec("gelu"), layer_spec("tanh"),
                 layer_spec("layernorm"), layer_spec("dropout"), mlp, custom, no_bias};
  return spec;
}

CustomLayerRegistry dense_registry() {
  CustomLayerRegistry registry;
  registry["dense"] = [](int64_t in) { return std::make_unique<LinearLayer>(kernels::cpu_backend(), in, 3, true); };
  return registry;
}

void expect_agrees_with_the_built_layers(const config::ModelSpec& spec) {
  const std::vector<LayerShape> shapes = model_shape(spec, dense_registry());
  const auto layers = build_layers(spec, kernels::cpu_backend(), dense_registry());
  ASSERT_EQ(shapes.size(), layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    int64_t params = 0;
    for (const Parameter* p : layers[i]->parameters()) params += p->value.rows() * p->value.cols();
    EXPECT_EQ(shapes[i].in, layers[i]->in_features()) << "layer " << i;
    EXPECT_EQ(shapes[i].out, layers[i]->out_features()) << "layer " << i;
    EXPECT_EQ(shapes[i].params, params) << "layer " << i << " (" << layers[i]->type() << ")";
    EXPECT_EQ(shapes[i].flops, layers[i]->flops_per_sample()) << "layer " << i << " (" << layers[i]->type() << ")";
  }
  EXPECT_EQ(flops_of(shapes), layer_costs(layers));  // so balanced_split gives the same partition
}

TEST(ModelShape, AgreesWithTheBuiltLayers) { expect_agrees_with_the_built_layers(every_layer_type()); }

// The spectral layers over a field: spectral_conv (weight only) and fno_block (three parameters).
TEST(ModelShape, AgreesWithTheBuiltSpectralLayers) {
  config::ModelSpec spec;
  spec.input_shape = {2, 8, 6};
  spec.inputs = 96;
  config::LayerSpec spectral = layer_spec("spectral_conv");
  spectral.channels = 3;
  spectral.modes = {3, 4};
  config::LayerSpec block = layer_spec("fno_block");
  block.channels = 5;
  block.modes = {4, 2};
  spec.layers = {spectral, block};
  expect_agrees_with_the_built_layers(spec);
  const std::vector<LayerShape> shapes = model_shape(spec, dense_registry());
  EXPECT_EQ(shapes[0].params, 2 * 3 * 6 * 4 * 2);                  // [in, out, 2·m1, m2, 2]
  EXPECT_EQ(shapes[1].params, 3 * 5 * 8 * 2 * 2 + 5 * 3 + 5);      // spectral.weight, pointwise.weight and .bias
}

// The partition's costs: each layer's FLOPs, and at each cut the activation and its gradient (4-byte floats, the
// carried skips included: LayerShape::out) at the link bandwidth, as FLOPs at the compute rate.
TEST(PartitionCosts, CutsCostTheirBytesAtTheLinkBandwidth) {
  const config::ModelSpec spec = every_layer_type();
  const std::vector<LayerShape> shapes = model_shape(spec, dense_registry());
  config::PipelineSpec pipeline;
  pipeline.bandwidth = 2e9;
  pipeline.flop_rate = 1e10;
  const PartitionCosts costs = partition_costs(shapes, pipeline);
  EXPECT_EQ(costs.layers, flops_of(shapes));
  ASSERT_EQ(costs.boundaries.size(), shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_DOUBLE_EQ(costs.boundaries[i], 2.0 * 4.0 * static_cast<double>(shapes[i].out) * 5.0) << "layer " << i;
  }
  pipeline.bandwidth = 1e300;  // links as fast as anything: the FLOP split
  EXPECT_EQ(balanced_split(partition_costs(shapes, pipeline), 3), balanced_split(flops_of(shapes), 3));
}

// A skip from the first stage to the last of four (core/model/stage_widths.h): it goes straight from stage 0 to
// stage 3, so the activation messages, the middle stages' inputs and the cut costs hold it only where it is sent.
config::ModelSpec first_to_last_skip() {
  config::ModelSpec spec;
  spec.inputs = 3;
  config::LayerSpec a = layer_spec("linear");
  a.outputs = 8;
  a.name = "a";
  config::LayerSpec narrow = layer_spec("linear");
  narrow.outputs = 4;
  config::LayerSpec concat = layer_spec("concat");
  concat.from = "a";
  config::LayerSpec head = layer_spec("linear");
  head.outputs = 2;
  spec.layers = {a, narrow, narrow, concat, head};  // stages {0}, {1}, {2}, {3, 4}
  return spec;
}

const std::vector<LayerRange> kFourStages = {{0, 1}, {1, 2}, {2, 3}, {3, 5}};

TEST(StageWidths, ARoutedSkipLeavesTheStagesAndMessagesBetween) {
  const config::ModelSpec spec = first_to_last_skip();
  const std::vector<LayerShape> shapes = model_shape(spec, {});
  ASSERT_EQ(shapes[1].in, 16) << "the sequential model carries a (8) past layer 1";
  EXPECT_EQ(activation_widths(shapes, kFourStages, skip_routes_of(spec, shapes, kFourStages)),
            (std::vector<int64_t>{8, 4, 4}));
  EXPECT_EQ(stage_in_widths(spec, shapes, kFourStages[1])[1], 8) << "stage 1 holds only its main input";
  EXPECT_EQ(stage_in_widths(spec, shapes, kFourStages[2])[2], 4);
  EXPECT_EQ(stage_in_widths(spec, shapes, kFourStages[3])[3], 12) << "the reader holds its main input and a";
  EXPECT_EQ(stage_in_widths(spec, shapes, kFourStages[0])[0], 3);
}

TEST(StageWidths, ARoutedSkipCostsOnlyTheCutThatEndsItsSendersStage) {
  const config::ModelSpec spec = first_to_last_skip();
  const std::vector<LayerShape> shapes = model_shape(spec, {});
  config::PipelineSpec pipeline;
  pipeline.bandwidth = 2e9;
  pipeline.flop_rate = 1e10;  // 5 FLOPs per byte
  const PartitionCosts costs = routed_partition_costs(spec, shapes, pipeline, kFourStages);
  const std::vector<int64_t> charged = {16, 4, 4, 12, 2};  // a (8) at cut 0 only, not at cuts 1 and 2
  ASSERT_EQ(costs.boundaries.size(), charged.size());
  for (size_t i = 0; i < charged.size(); ++i) {
    EXPECT_DOUBLE_EQ(costs.boundaries[i], 2.0 * 4.0 * static_cast<double>(charged[i]) * 5.0) << "cut " << i;
  }
}

// The split under routed skips: a wide skip from the first layer to the last charges every cut it passes under the
// carried estimate, so all stages look alike; charged once, the stages between take more layers, and the chosen
// split is faster under its own routes than the carried one. Without skips the split is choose_split's.
TEST(StageWidths, TheSplitWeighsARoutedSkipOnce) {
  config::ModelSpec spec;
  spec.inputs = 16;
  config::LayerSpec a = layer_spec("linear");
  a.outputs = 16;
  a.name = "a";
  config::LayerSpec body = layer_spec("linear");
  body.outputs = 16;
  config::LayerSpec add = layer_spec("add");
  add.from = "a";
  spec.layers = {a};
  for (int i = 0; i < 10; ++i) spec.layers.push_back(body);
  spec.layers.push_back(add);
  const std::vector<LayerShape> shapes = model_shape(spec, {});
  config::PipelineSpec pipeline;
  pipeline.flop_rate = 1e10;
  pipeline.bandwidth = 1e9;
  const std::vector<int> carried = balanced_split(partition_costs(shapes, pipeline), 4);
  const std::vector<int> routed = choose_model_split(spec, shapes, pipeline, 4);
  EXPECT_NE(routed, carried);
  const auto own_cost = [&](const std::vector<int>& split) {
    return slowest_chunk(routed_partition_costs(spec, shapes, pipeline, split_to_ranges(split)), split);
  };
  EXPECT_LT(own_cost(routed), own_cost(carried));
  spec.layers.back() = body;  // no skip
  const std::vector<LayerShape> plain = model_shape(spec, {});
  EXPECT_EQ(choose_model_split(spec, plain, pipeline, 4), balanced_split(partition_costs(plain, pipeline), 4));
}

TEST(ModelShape, AnUnregisteredCustomLayerIsNamed) {
  try {
    model_shape(every_layer_type(), {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConfig);
    EXPECT_NE(std::string(e.what()).find("model.layers[7]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::model
