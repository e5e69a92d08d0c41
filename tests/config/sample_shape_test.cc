// The shape rule (core/config/sample_shape.h) and `model.inputs` as a shape: output extents as PyTorch computes them,
// and every input a layer cannot take refused at parse time, naming the layer's entry and line.
#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/config/layer_spec.h"
#include "core/config/sample_shape.h"

namespace sluice::config {
namespace {

LayerSpec conv(int64_t channels, std::vector<int64_t> kernel, Padding padding = Padding::kNone,
               std::vector<int64_t> stride = {1}, std::vector<int64_t> dilation = {1}, int64_t groups = 1) {
  LayerSpec spec;
  spec.type = LayerType::kConv;
  spec.channels = channels;
  spec.kernel = std::move(kernel);
  spec.padding = padding;
  spec.stride = std::move(stride);
  spec.dilation = std::move(dilation);
  spec.groups = groups;
  return spec;
}

LayerSpec pool(const std::string& mode, std::vector<int64_t> kernel) {
  LayerSpec spec;
  spec.type = LayerType::kPool;
  spec.mode = mode;
  spec.kernel = std::move(kernel);
  return spec;
}

LayerSpec upsample(std::vector<int64_t> factor, const std::string& mode = "nearest") {
  LayerSpec spec;
  spec.type = LayerType::kUpsample;
  spec.mode = mode;
  spec.factor = std::move(factor);
  return spec;
}

LayerSpec conv_transpose(int64_t channels, std::vector<int64_t> kernel, std::vector<int64_t> stride = {1}) {
  LayerSpec spec;
  spec.type = LayerType::kConvTranspose;
  spec.channels = channels;
  spec.kernel = std::move(kernel);
  spec.stride = std::move(stride);
  return spec;
}

LayerSpec of_type(LayerType type) {
  LayerSpec spec;
  spec.type = type;
  spec.outputs = 5;
  return spec;
}

TEST(SampleShape, ConvExtentsArePyTorchs) {
  // ⌊(n + pads − dilation·(k − 1) − 1)/stride⌋ + 1, as nn.Conv2d computes it.
  EXPECT_EQ(output_shape(conv(8, {3}), {2, 10, 7}), (SampleShape{8, 8, 5}));
  EXPECT_EQ(output_shape(conv(8, {3}, Padding::kPeriodic), {2, 10, 7}), (SampleShape{8, 10, 7}));
  EXPECT_EQ(output_shape(conv(8, {3}, Padding::kZeros, {2}), {2, 10, 7}), (SampleShape{8, 5, 4}));
  EXPECT_EQ(output_shape(conv(8, {3}, Padding::kNone, {1}, {2}), {2, 10, 7}), (SampleShape{8, 6, 3}));
  EXPECT_EQ(output_shape(conv(8, {4}, Padding::kReflect), {2, 10, 7}), (SampleShape{8, 10, 7})) << "even kernel";
  EXPECT_EQ(output_shape(conv(4, {3, 1}), {2, 10, 7}), (SampleShape{4, 8, 7}));
  EXPECT_EQ(output_shape(conv(4, {3}), {2, 9}), (SampleShape{4, 7}));
  EXPECT_EQ(output_shape(conv(4, {3}, Padding::kPeriodic), {2, 4, 5, 6}), (SampleShape{4, 4, 5, 6}));
}

TEST(SampleShape, EvenKernelsPadOneMoreOnTheHighSide) {
  const kernels::ConvGeometry g = conv_geometry(conv(2, {4}, Padding::kZeros), {1, 8, 8});
  EXPECT_EQ(g.pad_low, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(g.pad_high, (std::vector<int64_t>{2, 2}));
}

void expect_refused(const LayerSpec& layer, const SampleShape& in, const std::string& words) {
  try {
    output_shape(layer, in);
    ADD_FAILURE() << "accepted; expected an error with: " << words;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConfig);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(SampleShape, LayersRefuseInputsTheyCannotTake) {
  expect_refused(conv(4, {3}), {12}, "needs a field");
  expect_refused(conv(4, {3, 3, 3}), {2, 8, 8}, "kernel has 3 values but the input field has 2");
  expect_refused(conv(4, {9}), {2, 8, 8}, "does not fit");
  expect_refused(conv(4, {3}, Padding::kNone, {1}, {1}, 3), {2, 8, 8}, "groups 3 must divide");
  expect_refused(conv(4, {17}, Padding::kReflect), {2, 8, 8}, "reflect padding of 8");
  expect_refused(conv(4, {19}, Padding::kPeriodic), {2, 8, 8}, "periodic padding of 9");
  expect_refused(of_type(LayerType::kLinear), {2, 8, 8}, "put {type: flatten} before it");
}

LayerSpec group_norm(int64_t groups) {
  LayerSpec spec;
  spec.type = LayerType::kGroupNorm;
  spec.groups = groups;
  return spec;
}

TEST(SampleShape, NormalizationsOfFieldsKeepTheShape) {
  EXPECT_EQ(output_shape(group_norm(2), {4, 3, 5}), (SampleShape{4, 3, 5}));
  EXPECT_EQ(output_shape(group_norm(1), {2, 10}), (SampleShape{2, 10}));
  EXPECT_EQ(output_shape(group_norm(4), {4, 2, 3, 2}), (SampleShape{4, 2, 3, 2}));
  EXPECT_EQ(output_shape(of_type(LayerType::kInstanceNorm), {3, 4, 5}), (SampleShape{3, 4, 5}));
  // layernorm: over the channels at each point on a field, over the features on rows (as before).
  EXPECT_EQ(output_shape(of_type(LayerType::kLayerNorm), {2, 8, 8}), (SampleShape{2, 8, 8}));
  EXPECT_EQ(output_shape(of_type(LayerType::kLayerNorm), {12}), (SampleShape{12}));
}

TEST(SampleShape, NormGeometryIsPerGroupOrPerChannel) {
  const kernels::NormGeometry g = norm_geometry(group_norm(2), {4, 3, 5});
  EXPECT_EQ(g.channels, 4);
  EXPECT_EQ(g.groups, 2);
  EXPECT_EQ(g.points, 15);
  EXPECT_EQ(norm_geometry(of_type(LayerType::kInstanceNorm), {3, 4, 5}).groups, 3);
  EXPECT_EQ(norm_geometry(of_type(LayerType::kLayerNorm), {3, 2, 3, 2}).groups, 1);
  EXPECT_EQ(norm_geometry(of_type(LayerType::kLayerNorm), {3, 2, 3, 2}).points, 12);
}

TEST(SampleShape, NormalizationsRefuseWhatTheyCannotTake) {
  expect_refused(group_norm(3), {4, 8, 8}, "groups 3 must divide the input channels (4)");
  expect_refused(group_norm(8), {4, 8}, "groups 8 must divide the input channels (4)");
  expect_refused(group_norm(2), {12}, "a group_norm layer needs a field");
  expect_refused(group_norm(2), {12}, "use {type: layernorm}");
  expect_refused(of_type(LayerType::kInstanceNorm), {12}, "an instance_norm layer needs a field");
}

TEST(SampleShape, PoolDividesEachExtentByItsKernel) {
  EXPECT_EQ(output_shape(pool("max", {2}), {3, 8, 6}), (SampleShape{3, 4, 3}));
  EXPECT_EQ(output_shape(pool("avg", {2, 3}), {3, 8, 6}), (SampleShape{3, 4, 2}));
  EXPECT_EQ(output_shape(pool("max", {5}), {1, 10}), (SampleShape{1, 2}));
  EXPECT_EQ(output_shape(pool("avg", {1, 2, 2}), {2, 3, 4, 8}), (SampleShape{2, 3, 2, 4}));
  const kernels::PoolGeometry g = pool_geometry(pool("avg", {2}), {3, 8, 6});
  EXPECT_EQ(g.mode, kernels::PoolMode::kAvg);
  EXPECT_EQ(g.kernel, (std::vector<int64_t>{2, 2}));
}

TEST(SampleShape, UpsampleMultipliesEachExtentByItsFactor) {
  EXPECT_EQ(output_shape(upsample({2}), {3, 4, 5}), (SampleShape{3, 8, 10}));
  EXPECT_EQ(output_shape(upsample({3, 1}, "linear"), {3, 4, 5}), (SampleShape{3, 12, 5}));
  EXPECT_EQ(output_shape(upsample({2}, "linear"), {1, 2, 3, 4}), (SampleShape{1, 4, 6, 8}));
  EXPECT_EQ(resample_geometry(upsample({2}, "linear"), {1, 7}).mode, kernels::ResampleMode::kLinear);
}

TEST(SampleShape, ConvTransposeExtentsArePyTorchs) {
  // (n − 1)·stride + kernel, as nn.ConvTranspose2d computes it without padding.
  EXPECT_EQ(output_shape(conv_transpose(4, {2}, {2}), {8, 5, 7}), (SampleShape{4, 10, 14}));
  EXPECT_EQ(output_shape(conv_transpose(4, {3}, {2}), {8, 5, 7}), (SampleShape{4, 11, 15}));
  EXPECT_EQ(output_shape(conv_transpose(2, {3}), {8, 5}), (SampleShape{2, 7}));
  EXPECT_EQ(output_shape(conv_transpose(2, {1, 2, 3}, {1, 2, 3}), {8, 2, 2, 2}), (SampleShape{2, 2, 4, 6}));
}

TEST(SampleShape, PoolUpsampleAndConvTransposeRefuseWhatTheyCannotTake) {
  expect_refused(pool("max", {2}), {3, 8, 7}, "spatial extent 7 (dimension 2 of the input [3, 8, 7]) is not a "
                                              "multiple of the pool kernel 2");
  expect_refused(pool("avg", {3, 2}), {3, 8, 8}, "spatial extent 8 (dimension 1");
  expect_refused(pool("max", {4}), {1, 2}, "is not a multiple of the pool kernel 4");
  expect_refused(pool("max", {2}), {16}, "a pool layer needs a field");
  expect_refused(pool("max", {2, 2}), {1, 8}, "kernel has 2 values but the input field has 1");
  expect_refused(upsample({2}), {16}, "an upsample layer needs a field");
  expect_refused(upsample({2, 2, 2}), {1, 4, 4}, "factor has 3 values but the input field has 2");
  expect_refused(conv_transpose(2, {2}), {16}, "a conv_transpose layer needs a field");
  expect_refused(conv_transpose(2, {2}, {2, 2}), {1, 4}, "stride has 2 values but the input field has 1");
}

TEST(SampleShape, ElementwiseLayersKeepTheFieldAndFlattenMakesRows) {
  for (LayerType type : {LayerType::kRelu, LayerType::kGelu, LayerType::kTanh, LayerType::kDropout}) {
    EXPECT_EQ(output_shape(of_type(type), {3, 4, 5}), (SampleShape{3, 4, 5}));
  }
  EXPECT_EQ(output_shape(of_type(LayerType::kFlatten), {3, 4, 5}), (SampleShape{60}));
  EXPECT_EQ(output_shape({conv(2, {3}, Padding::kPeriodic), of_type(LayerType::kFlatten),
                          of_type(LayerType::kLinear)},
                         {3, 4, 5}),
            (SampleShape{5}));
}

const char* const kTail = "loss: mse\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: 4}\n";

std::string refusal(const std::string& model) {
  try {
    parse_config(model + kTail);
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

// spectral_conv and fno_block: [channels, same extents]; modes must fit (2·m <= n in a non-last dimension, m <= n/2 + 1
// in the last), one per spatial dimension, on a field; refused at parse time naming the entry, its line and the type.
TEST(SampleShape, SpectralLayersKeepTheExtentsAndRefuseModesThatDoNotFit) {
  const Config cfg = parse_config(
      "model:\n  inputs: [2, 8, 6]\n  layers:\n    - {type: spectral_conv, channels: 3, modes: [4, 4]}\n"
      "    - {type: fno_block, channels: 5, modes: [1, 2]}\n" + std::string(kTail));
  EXPECT_EQ(cfg.model.layers[0].modes, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(output_shape(cfg.model.layers, {2, 8, 6}), (SampleShape{5, 8, 6}));
  const std::string wide = refusal("model:\n  inputs: [2, 8, 6]\n  layers:\n    - {type: gelu}\n"
                                   "    - {type: spectral_conv, channels: 3, modes: [5, 2]}\n");
  EXPECT_NE(wide.find("model.layers.1 (line 5)"), std::string::npos) << wide;
  EXPECT_NE(wide.find("spectral_conv modes 5 do not fit spatial extent 8 (dimension 1"), std::string::npos) << wide;
  const std::string last = refusal("model: {inputs: [2, 8, 6], layers: [{type: fno_block, channels: 3, modes: [2, 5]}]}\n");
  EXPECT_NE(last.find("fno_block modes 5 do not fit spatial extent 6 (dimension 2"), std::string::npos) << last;
  EXPECT_NE(last.find("m <= 4"), std::string::npos) << last;
  const std::string count = refusal("model: {inputs: [2, 8, 6], layers: [{type: spectral_conv, channels: 3, modes: [2]}]}\n");
  EXPECT_NE(count.find("spectral_conv modes has 1 values but the input field [2, 8, 6] has 2 spatial dimensions"),
            std::string::npos) << count;
  const std::string flat = refusal("model: {inputs: 16, layers: [{type: fno_block, channels: 3, modes: [2]}]}\n");
  EXPECT_NE(flat.find("fno_block layer needs a field"), std::string::npos) << flat;
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: spectral_conv, modes: [2]}]}\n").find("channels"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: spectral_conv, channels: 2, modes: [0]}]}\n")
                .find("positive"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: fno_block, channels: 2, modes: [2], kernel: 1}]}\n")
                .find("kernel"),
            std::string::npos);
  expect_refused(of_type(LayerType::kSpectralConv), {16}, "a spectral_conv layer needs a field");
}

TEST(SampleShape, ReshapeGivesItsShapeWhenTheCountsAgree) {
  LayerSpec to_field = of_type(LayerType::kReshape);
  to_field.shape = {1, 5};  // of_type's linear gives 5 features
  EXPECT_EQ(output_shape({of_type(LayerType::kLinear), to_field, conv(2, {3}, Padding::kPeriodic)}, {7}),
            (SampleShape{2, 5}));
  LayerSpec to_rows = of_type(LayerType::kReshape);
  to_rows.shape = {60};
  EXPECT_EQ(output_shape(to_rows, {3, 4, 5}), (SampleShape{60}));
  LayerSpec other_field = of_type(LayerType::kReshape);
  other_field.shape = {12, 5};
  EXPECT_EQ(output_shape(other_field, {3, 4, 5}), (SampleShape{12, 5}));
  expect_refused(other_field, {3, 4, 4}, "reshape to [12, 5] (60 values per sample) cannot take its input [3, 4, 4]");
}

TEST(SampleShape, ReshapeEntriesAreParsedAndCheckedWhereWritten) {
  const Config cfg = parse_config(
      "model:\n  inputs: 32\n  layers:\n    - {type: reshape, shape: [2, 4, 4]}\n"
      "    - {type: conv, channels: 1, kernel: 3, padding: zeros}\n    - {type: reshape, shape: 16}\n" +
      std::string(kTail));
  EXPECT_EQ(cfg.model.layers[0].shape, (std::vector<int64_t>{2, 4, 4}));
  EXPECT_EQ(cfg.model.layers[2].shape, (std::vector<int64_t>{16}));
  EXPECT_NE(refusal("model: {inputs: 32, layers: [{type: reshape, shape: [3, 4, 4]}]}\n").find("cannot take its input"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: 32, layers: [{type: reshape}]}\n").find("shape"), std::string::npos);
  EXPECT_NE(refusal("model: {inputs: 32, layers: [{type: reshape, shape: [1, 2, 2, 2, 4]}]}\n").find("1 to 4 extents"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: 32, layers: [{type: reshape, shape: [32], size: 1}]}\n").find("size"),
            std::string::npos);
}


// Every layer type takes `name` (a skip may start anywhere), and a type's parser refuses keys it does not know.
TEST(SampleShape, EveryFieldLayerMayBeNamed) {
  const Config cfg = parse_config(
      "model:\n  inputs: [2, 8, 8]\n  layers:\n"
      "    - {type: conv, channels: 4, kernel: 3, padding: periodic, name: a}\n"
      "    - {type: pool, mode: max, kernel: 2, name: b}\n"
      "    - {type: group_norm, groups: 2, name: c}\n"
      "    - {type: instance_norm, name: d}\n"
      "    - {type: layernorm, name: e}\n"
      "    - {type: upsample, factor: 2, name: f}\n"
      "    - {type: concat, from: a, name: g}\n"
      "    - {type: conv_transpose, channels: 2, kernel: 1, name: h}\n"
      "    - {type: add, from: h, name: i}\n"
      "    - {type: flatten, name: j}\n"
      "    - {type: linear, outputs: 3, name: k}\n" + std::string(kTail));
  ASSERT_EQ(cfg.model.layers.size(), 11u);
  for (size_t i = 0; i < cfg.model.layers.size(); ++i) {
    EXPECT_EQ(cfg.model.layers[i].name, std::string(1, static_cast<char>('a' + i)));
  }
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: pool, mode: max, kernel: 2, size: 2}]}\n").find("size"),
            std::string::npos);
}

// The CUDA backend runs every field layer, the skips and cross_entropy on a field output: a field model on a cuda
// stage is accepted (the parser used to refuse any field model or skip on cuda).
TEST(SampleShape, FieldModelsAreAcceptedOnACudaDevice) {
  EXPECT_NO_THROW(parse_config(
      "model: {inputs: [2, 8, 8], layers: [{type: conv, channels: 2, kernel: 3, padding: periodic, name: a}, "
      "{type: pool, mode: max, kernel: 2}, {type: conv_transpose, channels: 2, kernel: 2, stride: 2}, "
      "{type: concat, from: a}, {type: conv, channels: 2, kernel: 2, padding: zeros}, {type: add, from: a}, "
      "{type: group_norm, groups: 2}, {type: instance_norm}, {type: layernorm}, "
      "{type: upsample, factor: 2, mode: linear}, {type: flatten}, {type: layernorm}]}\ndevice: cuda\n" +
      std::string(kTail)));
  EXPECT_NO_THROW(parse_config("model: {inputs: [2, 8], layers: [{type: conv, channels: 3, kernel: 1}]}\n"
                               "pipeline: {stages: 2}\ndevice: [cpu, cuda]\nloss: cross_entropy\n"
                               "optimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: 4}\n"));
}

// The operator and token layers have CUDA kernels (cuFFT spectral convolution, cuBLAS attention): a cuda stage
// takes them. Every layer type does now, so the parser's refusal of a type without CUDA kernels (runs_on_cuda
// false) has no type to refuse until one is added without them.
TEST(SampleShape, OperatorAndTokenLayersAreAcceptedOnACudaDevice) {
  const std::vector<std::string> models = {
      "{inputs: [2, 8, 8], layers: [{type: conv, channels: 2, kernel: 1}, {type: spectral_conv, channels: 2, "
      "modes: [2, 2]}]}",
      "{inputs: [2, 8, 8], layers: [{type: fno_block, channels: 2, modes: [2, 2]}]}",
      "{inputs: [2, 8, 8], layers: [{type: patch_embed, patch: 4, dim: 32}, {type: transformer, heads: 2}, "
      "{type: unpatch, patch: 4, channels: 2, grid: [2, 2]}]}",
  };
  for (const std::string& model : models) {
    EXPECT_NO_THROW(parse_config("model: " + model + "\npipeline: {stages: 2}\ndevice: [cpu, cuda]\n" +
                                 std::string(kTail)))
        << model << " on a cuda stage";
    EXPECT_NO_THROW(parse_config("model: " + model + "\ndevice: cuda\n" + std::string(kTail))) << model;
  }
  for (config::LayerType type : config::layer_types()) {
    EXPECT_TRUE(config::runs_on_cuda(type)) << config::layer_type_name(type) << " has no CUDA kernels";
  }
}

TEST(SampleShape, CrossEntropyOnAFieldOutputIsAccepted) {
  // The softmax over the channels at each point (core/model/loss.h); targets have the output's shape.
  const Config cfg = parse_config("model: {inputs: [2, 8], layers: [{type: conv, channels: 3, kernel: 1}]}\n"
                                  "loss: cross_entropy\noptimizer: {type: sgd, lr: 0.1}\n"
                                  "data: {type: external, batch: 4}\n");
  EXPECT_EQ(cfg.loss, model::LossKind::kCrossEntropy);
  EXPECT_NO_THROW(parse_config("model: {inputs: [2, 8], layers: [{type: conv, channels: 3, kernel: 1}, "
                               "{type: flatten}, {type: linear, outputs: 4}]}\nloss: cross_entropy\n"
                               "optimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: 4}\n"));
}

TEST(SampleShape, ModelInputsMayBeAShape) {
  const Config cfg = parse_config(
      "model:\n  inputs: [2, 16, 8]\n  layers:\n    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
      "    - {type: flatten}\n    - {type: linear, outputs: 3}\n" + std::string(kTail));
  EXPECT_EQ(cfg.model.inputs, 256);
  EXPECT_EQ(cfg.model.input_shape, (SampleShape{2, 16, 8}));
  EXPECT_EQ(output_features(cfg.model), 3);
  EXPECT_EQ(parse_config("model: {inputs: 6, layers: [{type: linear, outputs: 2}]}\n" + std::string(kTail))
                .model.input_shape,
            SampleShape{});
}

TEST(SampleShape, TheConfigNamesTheEntryThatCannotTakeItsInput) {
  const std::string conv_on_rows =
      refusal("model:\n  inputs: 12\n  layers:\n    - {type: relu}\n    - {type: conv, channels: 2, kernel: 3}\n");
  EXPECT_NE(conv_on_rows.find("model.layers.1 (line 5)"), std::string::npos) << conv_on_rows;
  EXPECT_NE(conv_on_rows.find("needs a field"), std::string::npos) << conv_on_rows;
  const std::string linear_on_field =
      refusal("model:\n  inputs: [1, 4, 4]\n  layers:\n    - {type: linear, outputs: 2}\n");
  EXPECT_NE(linear_on_field.find("model.layers.0 (line 4)"), std::string::npos) << linear_on_field;
  EXPECT_NE(refusal("model: {inputs: [3], layers: [{type: relu}]}\n").find("got 1 values"), std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [1, 2, 3, 4, 5], layers: [{type: relu}]}\n").find("got 5 values"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 0, 4], layers: [{type: relu}]}\n").find("positive extent"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: conv, channels: 2, kernel: [3, 3]}]}\n")
                .find("kernel has 2 values"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: conv, channels: 2, kernel: 3, padding: wrap}]}\n")
                .find("none, zeros, periodic, reflect"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: conv, channels: 2, kernel: 3, size: 2}]}\n")
                .find("size"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: conv, channels: 2}]}\n").find("kernel"),
            std::string::npos);
}

TEST(SampleShape, TheConfigRefusesGroupsThatDoNotDivideTheChannels) {
  const std::string bad_groups = refusal(
      "model:\n  inputs: [4, 8, 8]\n  layers:\n    - {type: relu}\n    - {type: group_norm, groups: 3}\n");
  EXPECT_NE(bad_groups.find("model.layers.1 (line 5)"), std::string::npos) << bad_groups;
  EXPECT_NE(bad_groups.find("groups 3 must divide the input channels (4)"), std::string::npos) << bad_groups;
  const std::string on_rows = refusal("model: {inputs: 12, layers: [{type: instance_norm}]}\n");
  EXPECT_NE(on_rows.find("needs a field"), std::string::npos) << on_rows;
  EXPECT_NE(refusal("model: {inputs: [4, 8], layers: [{type: group_norm}]}\n").find("groups"), std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [4, 8], layers: [{type: group_norm, groups: 0}]}\n").find("positive"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [4, 8], layers: [{type: instance_norm, groups: 2}]}\n").find("groups"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [4, 8], layers: [{type: group_norm, groups: 2, eps: 0}]}\n").find("positive"),
            std::string::npos);
  const Config cfg = parse_config(
      "model:\n  inputs: [4, 8]\n  layers:\n    - {type: group_norm, groups: 2, eps: 1e-3}\n"
      "    - {type: instance_norm}\n    - {type: layernorm}\n    - {type: flatten}\n    - {type: layernorm}\n" +
      std::string(kTail));
  EXPECT_EQ(cfg.model.layers[0].groups, 2);
  EXPECT_DOUBLE_EQ(cfg.model.layers[0].eps, 1e-3);
  EXPECT_EQ(output_features(cfg.model), 32);
}

TEST(SampleShape, TheConfigNamesThePoolUpsampleOrConvTransposeThatCannotTakeItsInput) {
  const std::string odd = refusal("model:\n  inputs: [2, 8, 7]\n  layers:\n    - {type: pool, mode: max, kernel: 2}\n");
  EXPECT_NE(odd.find("model.layers.0 (line 4)"), std::string::npos) << odd;
  EXPECT_NE(odd.find("spatial extent 7"), std::string::npos) << odd;
  EXPECT_NE(odd.find("pool kernel 2"), std::string::npos) << odd;
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: pool, kernel: 2}]}\n").find("mode"), std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: pool, mode: min, kernel: 2}]}\n").find("max, avg"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: pool, mode: max, kernel: 2, stride: 1}]}\n")
                .find("stride"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: upsample, factor: 2, mode: cubic}]}\n")
                .find("nearest, linear"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: upsample, factor: 0}]}\n").find("positive"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: upsample, factor: 1.5}]}\n").find("factor"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: [2, 8], layers: [{type: conv_transpose, channels: 2, kernel: 2, "
                    "padding: zeros}]}\n")
                .find("padding"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: 8, layers: [{type: upsample, factor: 2}]}\n").find("needs a field"),
            std::string::npos);
  const Config cfg = parse_config(
      "model:\n  inputs: [2, 8, 8]\n  layers:\n    - {type: pool, mode: avg, kernel: [2, 4]}\n"
      "    - {type: upsample, factor: [2, 4], mode: linear}\n"
      "    - {type: conv_transpose, channels: 3, kernel: 2, stride: 2, bias: false}\n" + std::string(kTail));
  EXPECT_EQ(output_shape(cfg.model.layers, cfg.model.input_shape), (SampleShape{3, 16, 16}));
  EXPECT_EQ(cfg.model.layers[0].mode, "avg");
  EXPECT_EQ(cfg.model.layers[1].factor, (std::vector<int64_t>{2, 4}));
  EXPECT_FALSE(cfg.model.layers[2].bias);
  EXPECT_EQ(parse_config("model: {inputs: [1, 4], layers: [{type: upsample, factor: 2}]}\n" + std::string(kTail))
                .model.layers[0]
                .mode,
            "nearest");
}

// Tokens (issue 29): patch_embed → transformer → unpatch gives the field back; each refusal names the entry and
// line and what does not fit.
TEST(SampleShape, AVisionTransformerGivesItsFieldBackAndRefusalsNameTheLayer) {
  const Config cfg = parse_config(
      "model:\n  inputs: [3, 8, 12]\n  layers:\n    - {type: patch_embed, patch: [2, 4], dim: 24}\n"
      "    - {type: transformer, heads: 4}\n"
      "    - {type: unpatch, patch: [2, 4], channels: 3, grid: [4, 3]}\n" + std::string(kTail));
  ShapeWalk walk(cfg.model.input_shape);
  EXPECT_EQ(walk.next(cfg.model.layers[0]), (SampleShape{24, 12}));
  EXPECT_EQ(walk.next(cfg.model.layers[1]), (SampleShape{24, 12}));
  EXPECT_EQ(walk.next(cfg.model.layers[2]), (SampleShape{3, 8, 12}));
  EXPECT_EQ(cfg.model.layers[1].mlp_ratio, 4);

  const std::string patch = refusal("model:\n  inputs: [3, 8, 10]\n  layers:\n    - {type: patch_embed, patch: [2, 4], "
                                    "dim: 8}\n");
  EXPECT_NE(patch.find("model.layers.0 (line 4)"), std::string::npos) << patch;
  EXPECT_NE(patch.find("patch 4 does not divide spatial extent 10"), std::string::npos) << patch;
  const std::string heads = refusal("model:\n  inputs: [2, 8]\n  layers:\n    - {type: patch_embed, patch: 2, dim: 6}\n"
                                    "    - {type: transformer, heads: 4}\n");
  EXPECT_NE(heads.find("model.layers.1 (line 5)"), std::string::npos) << heads;
  EXPECT_NE(heads.find("heads 4 do not divide the token dimension 6"), std::string::npos) << heads;
  const std::string mismatch = refusal("model:\n  inputs: [2, 8]\n  layers:\n    - {type: patch_embed, patch: 2, "
                                       "dim: 6}\n    - {type: unpatch, patch: 2, channels: 2, grid: [4]}\n");
  EXPECT_NE(mismatch.find("model.layers.1 (line 5)"), std::string::npos) << mismatch;
  EXPECT_NE(mismatch.find("4 features per token, but the input [6, 4] has 6"), std::string::npos) << mismatch;
  const std::string grid = refusal("model:\n  inputs: [2, 8]\n  layers:\n    - {type: patch_embed, patch: 2, dim: 4}\n"
                                   "    - {type: unpatch, patch: 2, channels: 2, grid: [3]}\n");
  EXPECT_NE(grid.find("grid [3] has 3 tokens but the input [4, 4] has 4"), std::string::npos) << grid;
  const std::string dropout = refusal("model:\n  inputs: [2, 8]\n  layers:\n    - {type: patch_embed, patch: 2, "
                                      "dim: 4}\n    - {type: transformer, heads: 2, dropout: 1}\n");
  EXPECT_NE(dropout.find("model.layers.1.dropout (line 5)"), std::string::npos) << dropout;
  EXPECT_NE(dropout.find("attention dropout must satisfy 0 <= p < 1"), std::string::npos) << dropout;
  EXPECT_EQ(refusal("model:\n  inputs: [2, 8]\n  layers:\n    - {type: patch_embed, patch: 2, dim: 4}\n"
                    "    - {type: transformer, heads: 2, dropout: 0.1}\n"),
            "accepted");
  EXPECT_NE(refusal("model: {inputs: [2, 8, 8], layers: [{type: transformer, heads: 2}]}\n").find("takes tokens [D, T]"),
            std::string::npos);
  EXPECT_NE(refusal("model: {inputs: 8, layers: [{type: patch_embed, patch: 2, dim: 4}]}\n").find("needs a field"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::config
