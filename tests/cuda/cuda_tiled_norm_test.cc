// CudaBackend's group norm in pieces (group_norm_partial_sums, _normalize, _backward_partial_sums,
// _backward_with_sums; kernels/tiled_norm.h) on the GPU: the blocks of a 2 x 2 uneven split give the one-block bits
// (y, dx, parameter gradients and every tile's sums), as on the CPU (tests/kernels:tiled_norm_test), and the GPU's
// one block is the CPU's to 1e-5 of each tensor's scale (statistics in double on both, the GPU's sums in a fixed
// tree instead of element order). Skips with the reason when there is no GPU (fails when SLUICE_REQUIRE_CUDA is set).
// Written on a machine without a GPU: not yet run on one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/tiled_norm.h"
#include "tests/cuda/cuda_test_support.h"
#include "tests/kernels/random_tensor.h"
#include "tests/kernels/split_field.h"

namespace sluice::kernels {
namespace {

const std::vector<int64_t> kGlobal{16, 12}, kTile{4, 4};
constexpr int64_t kChannels = 6, kGroups = 3, kSamples = 2;

struct Result {
  Tensor y, dx, weight_grad, bias_grad;  // host
  std::vector<double> forward_sums, backward_sums;
};

Tensor download(Backend& backend, const Tensor& t) {
  Tensor host = Tensor::host(t.rows(), t.cols());
  backend.to_host(t, host.data());
  return host;
}

Tensor upload(Backend& backend, const Tensor& host) { return backend.from_host(host.rows(), host.cols(), host.data()); }

// Every block computed alone on `backend`, the tiles' sums brought together by global tile index.
Result run_split(Backend& backend, const std::vector<std::vector<int64_t>>& cuts, const Tensor& x, const Tensor& dy,
                 const Tensor& weight, const Tensor& bias) {
  const NormGeometry norm{kChannels, kGroups, extent_product(kGlobal), 1e-5f};
  const std::vector<Block> blocks = blocks_of(cuts);
  const std::vector<int64_t> none(kGlobal.size(), 0);
  std::vector<TiledGroupNorm> tiled;
  std::vector<Tensor> xs, dys;
  for (const Block& b : blocks) {
    tiled.push_back({norm, TileGrid{kGlobal, kTile, b.offset, b.extent}});
    xs.push_back(upload(backend, padded_block(x, kChannels, kGlobal, b, none, none)));
    dys.push_back(upload(backend, padded_block(dy, kChannels, kGlobal, b, none, none)));
  }
  const Tensor w = upload(backend, weight), bi = upload(backend, bias);
  const int64_t per_tile = group_norm_sums_per_tile(tiled[0], kSamples);
  auto gather = [&](auto&& sums_of) {
    std::vector<double> all(static_cast<size_t>(tiled[0].grid.global_tiles() * per_tile));
    for (size_t b = 0; b < blocks.size(); ++b) {
      const std::vector<double> mine = sums_of(b);
      const std::vector<int64_t> tiles = block_tile_indices(tiled[b].grid);
      for (size_t i = 0; i < tiles.size(); ++i) {
        std::copy_n(mine.begin() + static_cast<int64_t>(i) * per_tile, per_tile, all.begin() + tiles[i] * per_tile);
      }
    }
    return all;
  };
  Result r{Tensor::host(kSamples, x.cols()), Tensor::host(kSamples, x.cols()), Tensor(), Tensor(), {}, {}};
  r.forward_sums = gather([&](size_t b) { return tiled_group_norm_sums(backend, tiled[b], xs[b]); });
  const GroupNormStatistics stats = group_norm_statistics(backend, tiled[0], kSamples, r.forward_sums);
  r.backward_sums =
      gather([&](size_t b) { return tiled_group_norm_backward_sums(backend, tiled[b], dys[b], xs[b], w, stats); });
  std::vector<TilePartial> partials;
  for (size_t b = 0; b < blocks.size(); ++b) {
    Tensor y = backend.zeros(kSamples, xs[b].cols()), dx = backend.zeros(kSamples, xs[b].cols());
    tiled_group_norm_forward(backend, tiled[b], xs[b], w, bi, stats, y);
    tiled_group_norm_backward_data(backend, tiled[b], dys[b], xs[b], w, stats, r.backward_sums, dx);
    place_block(download(backend, y), kChannels, kGlobal, blocks[b], r.y);
    place_block(download(backend, dx), kChannels, kGlobal, blocks[b], r.dx);
    for (TilePartial& p : tiled_group_norm_param_grad_partials(backend, tiled[b], dys[b], xs[b], stats)) {
      partials.push_back(std::move(p));
    }
  }
  Tensor weight_grad = backend.zeros(1, kChannels), bias_grad = backend.zeros(1, kChannels);
  add_tile_partials(backend, partials, tiled[0].grid.global_tiles(), weight_grad, &bias_grad);
  r.weight_grad = download(backend, weight_grad);
  r.bias_grad = download(backend, bias_grad);
  return r;
}

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.size()); }

class CudaTiledNorm : public ::testing::Test {
 protected:
  void SetUp() override {
    SLUICE_SKIP_WITHOUT_CUDA_DEVICE();
    gpu_ = std::make_unique<CudaBackend>(0);
  }
  CpuBackend cpu_;
  std::unique_ptr<CudaBackend> gpu_;
};

TEST_F(CudaTiledNorm, SplitGivesTheOneBlockBitsAndTheCpuValues) {
  const int64_t features = kChannels * extent_product(kGlobal);
  Tensor x = random_tensor(kSamples, features, 1);
  for (int64_t i = 0; i < x.size(); ++i) x.data()[i] += 30.0f;
  const Tensor dy = random_tensor(kSamples, features, 2);
  const Tensor weight = random_tensor(1, kChannels, 3), bias = random_tensor(1, kChannels, 4);
  const Result whole = run_split(*gpu_, {{16}, {12}}, x, dy, weight, bias);
  const Result split = run_split(*gpu_, {{4, 12}, {8, 4}}, x, dy, weight, bias);
  const Result cpu = run_split(cpu_, {{16}, {12}}, x, dy, weight, bias);
  const std::vector<std::pair<const char*, const Tensor Result::*>> outputs = {
      {"y", &Result::y}, {"dx", &Result::dx}, {"weight gradient", &Result::weight_grad},
      {"bias gradient", &Result::bias_grad}};
  for (const auto& [name, member] : outputs) {
    const Tensor& s = split.*member;
    const Tensor& w = whole.*member;
    ASSERT_EQ(s.size(), w.size()) << name;
    EXPECT_EQ(std::memcmp(s.data(), w.data(), static_cast<size_t>(s.size()) * sizeof(float)), 0)
        << name << ": the split differs from the one block";
    EXPECT_LT(sluice::testing::relative_max_error(values(cpu.*member), values(w)), 1e-5) << name << " vs the CPU";
  }
  EXPECT_EQ(split.forward_sums, whole.forward_sums);
  EXPECT_EQ(split.backward_sums, whole.backward_sums);
}

}  // namespace
}  // namespace sluice::kernels
