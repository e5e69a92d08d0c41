// The tiled group norm (kernels/tiled_norm.h: statistics per canonical tile, added in tile order) against PyTorch's
// F.group_norm: every group_norm and instance_norm case of tests/model/reference/layer_references.txt (written once
// by reference/make_layer_references.py), y, dx and the weight and bias gradients to 1e-5 of the largest reference
// value, with the field as one tile and with one-point tiles on a split into uneven blocks (every dimension cut
// after its first point); the two tilings of the split and the one block give the same bits for the same tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/tiled_norm_split.h"
#include "tests/model/reference/layer_reference_file.h"

namespace sluice::kernels {
namespace {

using sluice::testing::LayerReferenceCase;

Tensor tensor_of(const LayerReferenceCase& c, const std::string& name, int64_t rows) {
  const std::vector<float>& values = c.tensors.at(name);
  return Tensor::host_from(rows, static_cast<int64_t>(values.size()) / rows, values);
}

// The group count of a case's layer: `groups: G` of a group_norm, the channels of an instance_norm.
int64_t groups_of(const LayerReferenceCase& c) {
  const size_t at = c.layer_yaml.find("groups:");
  return at == std::string::npos ? c.input_shape[0] : std::stoll(c.layer_yaml.substr(at + 7));
}

void expect_close(const Tensor& ours, const std::vector<float>& reference, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(ours.size()), reference.size()) << what;
  float scale = 1.0f;
  for (float v : reference) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < reference.size(); ++i) {
    ASSERT_NEAR(ours.data()[i], reference[i], 1e-5f * scale) << what << " element " << i << " (ours vs PyTorch)";
  }
}

void expect_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size()) * sizeof(float)), 0) << what;
}

TEST(TiledNormReference, GroupAndInstanceNormMatchPyTorch) {
  int checked = 0;
  for (const LayerReferenceCase& c :
       sluice::testing::read_layer_references("tests/model/reference/layer_references.txt")) {
    if (c.layer_yaml.find("group_norm") == std::string::npos &&
        c.layer_yaml.find("instance_norm") == std::string::npos) {
      continue;
    }
    SCOPED_TRACE(c.name);
    CpuBackend backend;
    const std::vector<int64_t> global(c.input_shape.begin() + 1, c.input_shape.end());
    const NormGeometry norm{c.input_shape[0], groups_of(c), extent_product(global), 1e-5f};
    const Tensor x = tensor_of(c, "x", c.batch), dy = tensor_of(c, "dy", c.batch);
    const Tensor weight = tensor_of(c, "weight", 1), bias = tensor_of(c, "bias", 1);
    std::vector<std::vector<int64_t>> whole, split;
    for (int64_t e : global) {
      whole.push_back({e});
      split.push_back(e > 1 ? std::vector<int64_t>{1, e - 1} : std::vector<int64_t>{e});
    }
    const std::vector<int64_t> points(global.size(), 1);
    const NormSplitResult one_tile = run_norm_split(backend, norm, global, global, whole, x, dy, weight, bias);
    const NormSplitResult one_block = run_norm_split(backend, norm, global, points, whole, x, dy, weight, bias);
    const NormSplitResult blocks = run_norm_split(backend, norm, global, points, split, x, dy, weight, bias);
    for (const NormSplitResult* r : {&one_tile, &blocks}) {
      expect_close(r->y, c.tensors.at("y"), "y");
      expect_close(r->dx, c.tensors.at("dx"), "dx");
      expect_close(r->weight_grad, c.tensors.at("weight_grad"), "weight gradient");
      expect_close(r->bias_grad, c.tensors.at("bias_grad"), "bias gradient");
    }
    expect_same_bits(blocks.y, one_block.y, "y (split vs one block)");
    expect_same_bits(blocks.dx, one_block.dx, "dx (split vs one block)");
    expect_same_bits(blocks.weight_grad, one_block.weight_grad, "weight gradient (split vs one block)");
    ++checked;
  }
  EXPECT_EQ(checked, 5) << "group_norm and instance_norm cases in the reference file";
}

}  // namespace
}  // namespace sluice::kernels
