// patch_embed, transformer and unpatch against PyTorch: every case of tests/model/reference/transformer_references.txt
// (written once by make_transformer_references.py beside it, a timm-style block written out in the script) is
// built from its YAML entry, given PyTorch's parameters and input, and must give PyTorch's output, input gradient and
// parameter gradients to 1e-5; the same cases against central finite differences of our own forward; and the
// parameters carry timm's names and PyTorch's shapes, as checkpoints store them; attention dropout by finite
// differences.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/model/reference/layer_reference_checks.h"

namespace sluice::model {
namespace {

using reference_checks::expect_matches_finite_differences;
using reference_checks::expect_matches_pytorch;
using reference_checks::type_of;
using sluice::testing::LayerReferenceCase;

const std::vector<LayerReferenceCase>& token_cases() {
  static const std::vector<LayerReferenceCase> all =
      sluice::testing::read_layer_references("tests/model/reference/transformer_references.txt");
  return all;
}

TEST(TokenLayersReference, ForwardAndGradientsMatchPyTorch) {
  std::set<std::string> types;
  int checked = 0;
  for (const LayerReferenceCase& c : token_cases()) {
    types.insert(type_of(c));
    expect_matches_pytorch(c);
    ++checked;
  }
  EXPECT_EQ(types, (std::set<std::string>{"patch_embed", "transformer", "unpatch"}));
  EXPECT_EQ(checked, 9) << "1-, 2- and 3-D patches; three blocks; 1-, 2- and 3-D unpatch";
}

// What checkpoints store (Parameter::stored_shape, format version 3): timm's names and PyTorch's shapes.
TEST(TokenLayersReference, ParametersAreNamedAndShapedAsTimm) {
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

// At most 48 elements of the input and of each parameter, so the asan build stays inside a small test's time.
TEST(TokenLayersReference, FusedBackwardMatchesFiniteDifferences) {
  for (const LayerReferenceCase& c : token_cases()) expect_matches_finite_differences(c, 48);
}

// Attention dropout has no PyTorch reference (its mask is Sluice's Philox stream): a block with dropout 0.3 on a
// reference case's input and parameters drops something while training, nothing at evaluation, and its backward
// (which draws the mask again) matches finite differences of its own forward.
TEST(TokenLayersReference, AttentionDropoutDropsWhileTrainingAndMatchesFiniteDifferences) {
  std::vector<LayerReferenceCase> dropped;
  for (const LayerReferenceCase& c : token_cases()) {
    if (c.name != "transformer_d6_t3_h3_r2_eps1e-6") continue;
    dropped.push_back(c);
    dropped.back().layer_yaml.insert(dropped.back().layer_yaml.size() - 1, ", dropout: 0.3");
  }
  ASSERT_EQ(dropped.size(), 1u);
  reference_checks::Built b = reference_checks::build(dropped[0]);
  ForwardContext training, evaluation;
  evaluation.training = false;
  LayerSaved saved;
  const kernels::Tensor y_training = b.layer->forward(b.x, training, saved);
  const kernels::Tensor y_evaluation = b.layer->forward(b.x, evaluation, saved);
  reference_checks::expect_close(y_evaluation, dropped[0].tensors.at("y"), "y without dropout");
  EXPECT_NE(y_training.to_vector(), y_evaluation.to_vector());
  expect_matches_finite_differences(dropped[0], 48);
}

}  // namespace
}  // namespace sluice::model
