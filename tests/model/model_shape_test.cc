// The config-only model shape agrees with the built layers: the same widths, parameter counts and per-sample
// FLOPs (so the partition and the rank-order choice computed before building see the model that is built),
// for every built-in layer type and a custom layer with parameters of its own.
#include "core/model/model_shape.h"

#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/model/linear_layer.h"
#include "core/model/partition.h"
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
