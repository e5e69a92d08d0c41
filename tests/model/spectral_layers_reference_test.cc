// spectral_conv and fno_block against PyTorch: every case of tests/model/reference/spectral_references.txt (written
// once by make_spectral_references.py beside it, from the FNO paper's code) built as a config would build it must give
// PyTorch's output, input gradient and parameter gradients to 1e-5, and its backward must match central finite
// differences of our own forward (tests/model/reference/layer_reference_checks.h).
#include <gtest/gtest.h>

#include <algorithm>
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
using kernels::Tensor;
using sluice::testing::LayerReferenceCase;

const std::vector<LayerReferenceCase>& spectral_cases() {
  static const std::vector<LayerReferenceCase> all =
      sluice::testing::read_layer_references("tests/model/reference/spectral_references.txt");
  return all;
}

// spectral_conv in 1, 2 and 3 dimensions (some modes, 2·m = n, the last dimension's Nyquist mode, odd extents) and
// fno_block in each.
TEST(SpectralLayersReference, TheFileHoldsBothLayersInEveryDimension) {
  std::set<std::string> seen;
  for (const LayerReferenceCase& c : spectral_cases()) {
    seen.insert(type_of(c) + std::to_string(c.input_shape.size() - 1));
  }
  for (const char* kind : {"spectral_conv1", "spectral_conv2", "spectral_conv3", "fno_block1", "fno_block2",
                           "fno_block3"}) {
    EXPECT_EQ(seen.count(kind), 1u) << kind;
  }
  EXPECT_GE(spectral_cases().size(), 11u);
}

// The checkpoint's names and shapes (Parameter::stored_shape), as docs/LAYERS.md gives them, and the initial values
// of the FNO code: real and imaginary parts in [0, 1/(in·out)).
TEST(SpectralLayersReference, ParametersAreNamedShapedAndInitializedAsDocumented) {
  const config::Config cfg = config::parse_config(
      "model:\n  inputs: [3, 8, 6, 10]\n  layers:\n    - {type: spectral_conv, channels: 2, modes: [3, 2, 4]}\n"
      "    - {type: fno_block, channels: 4, modes: [1, 3, 6]}\n"
      "loss: mse\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: 1}\n");
  auto layers = build_layers(cfg.model, kernels::cpu_backend());
  init_layers(layers, 5);
  std::vector<std::pair<std::string, std::vector<int64_t>>> seen;
  for (auto& layer : layers) {
    for (Parameter* p : layer->parameters()) seen.emplace_back(p->qualified_name(), p->stored_shape());
  }
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"layers.0.weight", {3, 2, 6, 4, 4, 2}},
      {"layers.1.spectral.weight", {2, 4, 2, 6, 6, 2}},
      {"layers.1.pointwise.weight", {4, 2, 1, 1, 1}},
      {"layers.1.pointwise.bias", {4}}};
  EXPECT_EQ(seen, expected);
  for (int l = 0; l < 2; ++l) {
    const Tensor& w = layers[l]->parameters()[0]->value;
    const float scale = l == 0 ? 1.0f / 6.0f : 1.0f / 8.0f;
    float low = 1.0f, high = 0.0f;
    for (int64_t i = 0; i < w.size(); ++i) low = std::min(low, w.data()[i]), high = std::max(high, w.data()[i]);
    EXPECT_GE(low, 0.0f) << "layer " << l;
    EXPECT_LT(high, scale) << "layer " << l;
    EXPECT_GT(high, 0.9f * scale) << "layer " << l << ": spread over the range";
  }
}

TEST(SpectralLayersReference, ForwardAndGradientsMatchPyTorch) {
  for (const LayerReferenceCase& c : spectral_cases()) expect_matches_pytorch(c);
}

TEST(SpectralLayersReference, FusedBackwardMatchesFiniteDifferences) {
  // At most 48 elements of each tensor, spread evenly over it (so over every block of modes of the weight): every
  // element of every case would take the asan build past the test's time.
  for (const LayerReferenceCase& c : spectral_cases()) expect_matches_finite_differences(c, 48);
}

}  // namespace
}  // namespace sluice::model
