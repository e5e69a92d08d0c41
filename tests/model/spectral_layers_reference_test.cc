// spectral_conv and fno_block against PyTorch: every case of tests/model/reference/spectral_references.txt (written
// once by make_spectral_references.py beside it, from the FNO paper's code) built as a config would build it must give
// PyTorch's output, input gradient and parameter gradients to 1e-5, and its backward must match central finite
// differences of our own forward (tests/model/reference/layer_reference_checks.h).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/model/reference/layer_reference_checks.h"

namespace sluice::model {
namespace {

using reference_checks::expect_matches_finite_differences;
using reference_checks::expect_matches_pytorch;
using reference_checks::type_of;
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
