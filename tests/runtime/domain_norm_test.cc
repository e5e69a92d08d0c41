// Group norm on a domain-split field (core/runtime/domain_norm.h; issue 32 items 2 and 3) on 4 MPI ranks, each
// holding one block: the forward output, dx, and the weight and bias gradients after 2 micro-batches (per-tile
// accumulators gathered once per step), are BITWISE the undecomposed run's (the same op on the whole field as one
// block, one rank, no messages), and so are the statistics. Group norm and instance norm (groups = channels) on an
// uneven 2 x 2 split of a 2-D field and a 2 x 2 x 1 split of a 3-D field. The gathers' bytes are checked: one gather
// of samples x groups x 2 doubles per tile each forward and each backward.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/runtime/domain_norm.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/norm_geometry.h"
#include "tests/kernels/random_tensor.h"
#include "tests/mpi_world.h"
#include "tests/runtime/domain_runs.h"

namespace sluice::runtime {
namespace {

using kernels::random_tensor;
using kernels::Tensor;

struct NormCase {
  const char* name;
  Split split;
  int64_t channels = 6, groups = 3, samples = 2;
};

void PrintTo(const NormCase& c, std::ostream* os) { *os << c.name; }

const Split kUneven2d{{16, 16}, {4, 4}, {{8, 8}, {4, 12}}};
const Split k3d{{8, 8, 4}, {4, 4, 2}, {{4, 4}, {4, 4}, {4}}};

// x spread around a mean far from zero, so the variance's formulation matters.
Tensor shifted(Tensor t) {
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = 25.0f + t.data()[i];
  return t;
}

class DomainGroupNormTest : public ::testing::TestWithParam<NormCase> {};

TEST_P(DomainGroupNormTest, BlocksGiveTheWholeFieldBits) {
  const NormCase& c = GetParam();
  kernels::CpuBackend backend;
  Runs runs(c.split);
  const kernels::NormGeometry norm{c.channels, c.groups, points_of(c.split.global), 1e-5f};
  DomainGroupNorm split(backend, runs.domain.field(), norm, "norm");
  DomainGroupNorm whole(backend, runs.whole->field(), norm, "norm");
  const Tensor w = random_tensor(1, c.channels, 1), b = random_tensor(1, c.channels, 2);
  const int64_t points = points_of(c.split.global);
  const int64_t held = runs.domain.field().grid().block_tiles();
  const int64_t gather_bytes = 3 * held * static_cast<int64_t>(sizeof(int64_t) + c.samples * c.groups * 2 * 8);
  for (unsigned m = 0; m < 2; ++m) {  // two micro-batches of one step
    const Tensor x = shifted(random_tensor(c.samples, c.channels * points, 10 + m));
    const Tensor dy = random_tensor(c.samples, c.channels * points, 20 + m);
    kernels::GroupNormStatistics whole_stats, split_stats;
    const Tensor y = whole.forward(x, w, b, whole_stats);
    const Tensor dx = whole.backward_data(dy, x, w, whole_stats);
    whole.accumulate_param_grads(dy, x, whole_stats);

    const Tensor x_block = runs.cut(x, c.channels), dy_block = runs.cut(dy, c.channels);
    expect_bits(split.forward(x_block, w, b, split_stats), runs.cut(y, c.channels), "forward output");
    EXPECT_EQ(runs.domain.gather().last_call().bytes_sent, gather_bytes) << "the forward's gather";
    expect_bits(split_stats.mean, whole_stats.mean, "mean");
    expect_bits(split_stats.rstd, whole_stats.rstd, "rstd");
    expect_bits(split.backward_data(dy_block, x_block, w, split_stats), runs.cut(dx, c.channels), "dx");
    EXPECT_EQ(runs.domain.gather().last_call().bytes_sent, gather_bytes) << "the backward's gather";
    split.accumulate_param_grads(dy_block, x_block, split_stats);
  }
  Tensor whole_w = Tensor::host(1, c.channels), whole_b = Tensor::host(1, c.channels);
  Tensor split_w = Tensor::host(1, c.channels), split_b = Tensor::host(1, c.channels);
  whole.finish_step(whole_w, whole_b);
  split.finish_step(split_w, split_b);
  expect_bits(split_w, whole_w, "weight gradient");
  expect_bits(split_b, whole_b, "bias gradient");
  EXPECT_EQ(runs.domain.gather().last_call().bytes_sent,
            3 * held * static_cast<int64_t>(sizeof(int64_t) + 2 * c.channels * sizeof(float)));
  EXPECT_EQ(runs.whole->channel().totals().bytes_sent + runs.whole->gather().totals().bytes_sent, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Splits, DomainGroupNormTest,
    ::testing::Values(NormCase{"2d_uneven_group_norm", kUneven2d}, NormCase{"2d_uneven_instance_norm", kUneven2d, 4, 4},
                      NormCase{"3d_2x2x1_group_norm", k3d, 4, 2, 1}),
    [](const ::testing::TestParamInfo<NormCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace sluice::runtime
