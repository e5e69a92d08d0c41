// The field layers against PyTorch: every case of tests/model/reference/layer_references.txt (written once by
// make_layer_references.py beside it) is parsed from its YAML entry as a config would be, built, given PyTorch's
// parameters and input, and must give PyTorch's output, input gradient and parameter gradients to 1e-5 (relative to
// the largest reference value). The same cases are then checked against central finite differences of our own forward.
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

const std::vector<LayerReferenceCase>& cases() {
  static const std::vector<LayerReferenceCase> all =
      sluice::testing::read_layer_references("tests/model/reference/layer_references.txt");
  return all;
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
TEST(FieldLayersReference, ForwardAndGradientsMatchPyTorch) {
  int checked = 0;
  for (const LayerReferenceCase& c : cases()) {
    expect_matches_pytorch(c);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(cases().size())) << "every case of the file";
  EXPECT_GE(checked, 68);
}
TEST(FieldLayersReference, FusedBackwardMatchesFiniteDifferences) {
  for (const LayerReferenceCase& c : cases()) {
    if (type_of(c) == "relu") continue;  // relu: kinks
    expect_matches_finite_differences(c);
  }
}

}  // namespace
}  // namespace sluice::model
