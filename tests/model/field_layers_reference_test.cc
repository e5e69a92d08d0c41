// The field layers against PyTorch: every case of tests/model/reference/layer_references.txt (written once by
// make_layer_references.py beside it) is parsed from its YAML entry as a config would be, built, given PyTorch's
// parameters and input, and must give PyTorch's output, input gradient and parameter gradients to 1e-5 (relative to
// the largest reference value). The same cases are then checked against central finite differences of our own forward.
// transformer_references.txt (make_transformer_references.py) holds the token layers' cases, checked the same way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/model/builder.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/reference/layer_reference_file.h"

namespace sluice::model {
namespace {

using kernels::Tensor;
using sluice::testing::LayerReferenceCase;

std::string type_of(const LayerReferenceCase& c) {
  const size_t start = c.layer_yaml.find("type:") + 5;
  const size_t end = c.layer_yaml.find_first_of(",}", start);
  std::string type = c.layer_yaml.substr(start, end - start);
  type.erase(std::remove(type.begin(), type.end(), ' '), type.end());
  return type;
}

config::Config config_of(const LayerReferenceCase& c) {
  std::string shape;
  for (int64_t extent : c.input_shape) shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
  return config::parse_config("model:\n  inputs: [" + shape + "]\n  layers:\n    - " + c.layer_yaml +
                              "\nloss: mse\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: " +
                              std::to_string(c.batch) + "}\n");
}

const std::vector<LayerReferenceCase>& cases() {
  static const std::vector<LayerReferenceCase> all =
      sluice::testing::read_layer_references("tests/model/reference/layer_references.txt");
  return all;
}

// patch_embed, transformer and unpatch (issue 29; make_transformer_references.py), in the same format.
const std::vector<LayerReferenceCase>& token_cases() {
  static const std::vector<LayerReferenceCase> all =
      sluice::testing::read_layer_references("tests/model/reference/transformer_references.txt");
  return all;
}

Tensor tensor_of(const LayerReferenceCase& c, const std::string& name, int64_t rows) {
  const std::vector<float>& values = c.tensors.at(name);
  return Tensor::host_from(rows, static_cast<int64_t>(values.size()) / rows, values);
}

// |ours - reference| <= 1e-5 · max(1, max |reference|) element by element.
void expect_close(const Tensor& ours, const std::vector<float>& reference, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(ours.size()), reference.size()) << what;
  float scale = 1.0f;
  for (float v : reference) scale = std::max(scale, std::fabs(v));
  int reported = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const float difference = std::fabs(ours.data()[i] - reference[i]);
    if (difference > 1e-5f * scale && reported++ < 3) {
      ADD_FAILURE() << what << " element " << i << ": ours " << ours.data()[i] << ", PyTorch " << reference[i];
    }
  }
}

struct Built {
  std::unique_ptr<Layer> layer;
  Tensor x, dy;
};

Built build(const LayerReferenceCase& c) {
  const config::Config cfg = config_of(c);
  auto layers = build_layers(cfg.model, kernels::cpu_backend());
  EXPECT_EQ(layers.size(), 1u);
  Built built{std::move(layers[0]), tensor_of(c, "x", c.batch), tensor_of(c, "dy", c.batch)};
  built.layer->set_global_index(0);
  for (Parameter* p : built.layer->parameters()) {
    const std::vector<float>& values = c.tensors.at(p->name);
    EXPECT_EQ(static_cast<size_t>(p->value.size()), values.size()) << c.name << " " << p->name;
    std::copy(values.begin(), values.end(), p->value.data());
  }
  return built;
}

TEST(FieldLayersReference, TheFileHoldsCasesOfEveryBuiltFieldLayer) {
  std::set<std::string> types;
  for (const LayerReferenceCase& c : cases()) types.insert(type_of(c));
  for (const char* type : {"conv", "conv_transpose", "pool", "upsample", "flatten", "gelu", "relu", "tanh",
                           "group_norm", "instance_norm", "layernorm"}) {
    EXPECT_EQ(types.count(type), 1u) << type;
  }
  int conv_cases = 0;
  for (const LayerReferenceCase& c : cases()) conv_cases += type_of(c) == "conv";
  EXPECT_GE(conv_cases, 30) << "every padding in 1, 2 and 3 dimensions, strides, dilations, groups, even kernels";
}

// Every case's forward and split backward (I then W, as the zero-bubble schedules run it) against PyTorch's.
int check_against_pytorch(const std::vector<LayerReferenceCase>& all) {
  int checked = 0;
  for (const LayerReferenceCase& c : all) {
    SCOPED_TRACE(c.name + ": " + c.layer_yaml);
    Built b = build(c);
    ForwardContext context;
    LayerSaved saved;
    const Tensor y = b.layer->forward(b.x, context, saved);
    expect_close(y, c.tensors.at("y"), "y");
    const Tensor dx = b.layer->backward_input(b.dy, saved);
    b.layer->backward_weight(b.dy, saved);
    expect_close(dx, c.tensors.at("dx"), "dx");
    for (Parameter* p : b.layer->parameters()) expect_close(p->grad, c.tensors.at(p->name + "_grad"), p->name + "_grad");
    ++checked;
  }
  return checked;
}

TEST(FieldLayersReference, ForwardAndGradientsMatchPyTorch) {
  const int checked = check_against_pytorch(cases());
  EXPECT_EQ(checked, static_cast<int>(cases().size())) << "every case of the file";
  EXPECT_GE(checked, 68);
}

TEST(FieldLayersReference, TokenLayersMatchPyTorch) {
  std::set<std::string> types;
  for (const LayerReferenceCase& c : token_cases()) types.insert(type_of(c));
  EXPECT_EQ(types, (std::set<std::string>{"patch_embed", "transformer", "unpatch"}));
  EXPECT_EQ(check_against_pytorch(token_cases()), 9) << "1-, 2- and 3-D patches; three blocks; 1-, 2- and 3-D unpatch";
}

// What checkpoints store (Parameter::stored_shape, format version 3): timm's names and PyTorch's shapes.
TEST(FieldLayersReference, TokenLayersNameAndShapeTheirParametersAsTimm) {
  const config::Config cfg = config::parse_config(
      "model:\n  inputs: [3, 8, 12]\n  layers:\n    - {type: patch_embed, patch: [2, 4], dim: 24}\n"
      "    - {type: transformer, heads: 4, mlp_ratio: 2}\n    - {type: unpatch, patch: [2, 4], channels: 3, grid: [4, 3]}\n"
      "loss: mse\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: 2}\n");
  auto layers = build_layers(cfg.model, kernels::cpu_backend());
  using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;
  auto shapes_of = [](Layer& layer) {
    Shapes shapes;
    for (const Parameter* p : layer.parameters()) shapes.emplace_back(p->name, p->stored_shape());
    return shapes;
  };
  EXPECT_EQ(shapes_of(*layers[0]),
            (Shapes{{"proj.weight", {24, 3, 2, 4}}, {"proj.bias", {24}}, {"pos_embed", {1, 24, 12}}}));
  EXPECT_EQ(shapes_of(*layers[1]),
            (Shapes{{"norm1.weight", {24}}, {"norm1.bias", {24}}, {"attn.qkv.weight", {72, 24}}, {"attn.qkv.bias", {72}},
                    {"attn.proj.weight", {24, 24}}, {"attn.proj.bias", {24}}, {"norm2.weight", {24}},
                    {"norm2.bias", {24}}, {"mlp.fc1.weight", {48, 24}}, {"mlp.fc1.bias", {48}},
                    {"mlp.fc2.weight", {24, 48}}, {"mlp.fc2.bias", {24}}}));
  EXPECT_TRUE(layers[2]->parameters().empty());
}

// L = sum(y · dy) in double from our fp32 forward; its central differences against our backward, for the input
// and every parameter element.
double objective(Layer& layer, const Tensor& x, const Tensor& dy) {
  ForwardContext context;
  LayerSaved saved;
  const Tensor y = layer.forward(x, context, saved);
  double sum = 0.0;
  for (int64_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y.data()[i]) * dy.data()[i];
  return sum;
}

double central_difference(Layer& layer, float* value, const Tensor& x, const Tensor& dy, float step) {
  const float original = *value;
  *value = original + step;
  const double plus = objective(layer, x, dy);
  *value = original - step;
  const double minus = objective(layer, x, dy);
  *value = original;
  return (plus - minus) / (2.0 * step);
}

// Richardson's extrapolation of two central differences (steps h and h/2) cancels their h² error: the
// normalizations over a few channels curve strongly enough for a plain central difference at h = 1e-2 to miss by
// more than the tolerance.
double central_difference(Layer& layer, float* value, const Tensor& x, const Tensor& dy) {
  constexpr float kStep = 1e-2f;
  const double coarse = central_difference(layer, value, x, dy, kStep);
  const double fine = central_difference(layer, value, x, dy, kStep / 2);
  return (4.0 * fine - coarse) / 3.0;
}

void check_finite_differences(const std::vector<LayerReferenceCase>& all) {
  for (const LayerReferenceCase& c : all) {
    if (type_of(c) == "relu") continue;  // relu: kinks
    SCOPED_TRACE(c.name + ": " + c.layer_yaml);
    Built b = build(c);
    ForwardContext context;
    LayerSaved saved;
    b.layer->forward(b.x, context, saved);
    const Tensor dx = b.layer->backward(b.dy, saved);  // fused B
    Tensor x = b.x;
    for (int64_t i = 0; i < x.size(); ++i) {
      const double numeric = central_difference(*b.layer, x.data() + i, x, b.dy);
      EXPECT_NEAR(dx.data()[i], numeric, 2e-3 + 2e-3 * std::fabs(numeric)) << "x element " << i;
    }
    for (Parameter* p : b.layer->parameters()) {
      for (int64_t i = 0; i < p->value.size(); ++i) {
        const double numeric = central_difference(*b.layer, p->value.data() + i, b.x, b.dy);
        EXPECT_NEAR(p->grad.data()[i], numeric, 2e-3 + 2e-3 * std::fabs(numeric)) << p->name << " element " << i;
      }
    }
  }
}

TEST(FieldLayersReference, FusedBackwardMatchesFiniteDifferences) { check_finite_differences(cases()); }

TEST(FieldLayersReference, TokenLayersFusedBackwardMatchesFiniteDifferences) {
  check_finite_differences(token_cases());
}

// Attention dropout has no PyTorch reference (its mask is Sluice's Philox stream): a block with dropout 0.3 on a
// reference case's input and parameters drops something while training, nothing at evaluation, and its backward
// (which draws the mask again) matches finite differences of its own forward.
TEST(FieldLayersReference, AttentionDropoutDropsWhileTrainingAndMatchesFiniteDifferences) {
  std::vector<LayerReferenceCase> dropped;
  for (const LayerReferenceCase& c : token_cases()) {
    if (c.name != "transformer_d6_t3_h3_r2_eps1e-6") continue;
    dropped.push_back(c);
    dropped.back().layer_yaml.insert(dropped.back().layer_yaml.size() - 1, ", dropout: 0.3");
  }
  ASSERT_EQ(dropped.size(), 1u);
  Built b = build(dropped[0]);
  ForwardContext training, evaluation;
  evaluation.training = false;
  LayerSaved saved;
  const Tensor y_training = b.layer->forward(b.x, training, saved);
  const Tensor y_evaluation = b.layer->forward(b.x, evaluation, saved);
  expect_close(y_evaluation, dropped[0].tensors.at("y"), "y without dropout");
  EXPECT_NE(y_training.to_vector(), y_evaluation.to_vector());
  check_finite_differences(dropped);
}

}  // namespace
}  // namespace sluice::model
