// Domain-parallel field ops (core/runtime/domain_*.h; issue 32 items 2 and 3) on 4 MPI ranks, each holding one
// block of a split field: the conv's forward output, dx, and its parameter gradients after 2 micro-batches (per-tile
// accumulators gathered across the ranks once per step and added in tile order), and the field loss, are BITWISE
// the undecomposed run's (the same ops on the whole field as one block, one rank, no messages). Splits: an uneven
// 2 x 2 split of a 2-D field (8 + 8 by 4 + 12, tiles 4 x 4) and a 3-D field split 2 x 2 x 1; kernels 3 x 3, an
// even 4 x 2 (the dy halo mirrored), dilation 2; periodic padding, zero padding (zeros at the global edges, no
// message across them) and reflect padding (the block's own points mirrored there), in 2-D and 3-D. The bytes the
// ops report are checked against the halo layout's.
// A missing or repeated tile in the gather is refused on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/comm/halo_layout.h"
#include "core/comm/tile_gather.h"
#include "core/common/error.h"
#include "core/runtime/domain_conv.h"
#include "core/runtime/domain_loss.h"
#include "kernels/conv_geometry.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/random_tensor.h"
#include "tests/mpi_world.h"
#include "tests/runtime/domain_runs.h"

namespace sluice::runtime {
namespace {

using kernels::random_tensor;
using kernels::Tensor;

const Split kUneven2d{{16, 16}, {4, 4}, {{8, 8}, {4, 12}}};
const Split k3d{{8, 8, 4}, {4, 4, 2}, {{4, 4}, {4, 4}, {4}}};

struct ConvCase {
  const char* name;
  Split split;
  std::vector<int64_t> kernel, dilation;
  int64_t samples = 2, in_channels = 3, out_channels = 4;
  comm::HaloSide edge = comm::HaloSide::kNeighbour;  // kZeros: padding zeros; kReflect: padding reflect
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

kernels::ConvGeometry whole_conv(const std::vector<int64_t>& global, int64_t in, int64_t out,
                                 const std::vector<int64_t>& kernel, const std::vector<int64_t>& dilation) {
  kernels::ConvGeometry g;
  g.in_channels = in;
  g.out_channels = out;
  g.in = global;
  g.kernel = kernel;
  g.dilation = dilation;
  g.stride.assign(global.size(), 1);
  for (size_t d = 0; d < global.size(); ++d) {
    g.pad_low.push_back(kernels::same_pad_low(kernel[d], dilation[d]));
    g.pad_high.push_back(kernels::same_pad_high(kernel[d], dilation[d]));
  }
  kernels::complete_conv_geometry(g);
  return g;
}

// What one halo fill of this rank's block with these widths sends (halo_layout.h's count).
int64_t fill_bytes(const Split& s, int64_t samples, int64_t channels, const std::vector<int64_t>& low,
                   const std::vector<int64_t>& high, comm::HaloSide edge) {
  comm::HaloGrid grid;
  grid.block_extents = s.cuts;
  grid.halo_low = low;
  grid.halo_high = high;
  comm::HaloBlock block = comm::halo_block_of(grid, samples, channels, testing::world_rank(), 4);
  comm::set_global_edge_fill(block, edge);
  return comm::halo_bytes_per_fill(block);
}

struct Plain {
  Tensor y, dx;
};

// The backend's plain conv of the whole field, not tiled and without halo exchange: periodic padding, a 'valid'
// conv, the padding's adjoint (reflect likewise; zero padding: the conv's own implicit padding); parameter gradients
// accumulated into w_grad / b_grad. The one-block domain run must
// match it to within rounding (its own bits differ: other call shapes), which pins the halo widths: a wrong dy halo
// (not mirrored) gives the split and the one-block run the same wrong dx.
Plain plain_conv(kernels::Backend& backend, const kernels::ConvGeometry& g, const Tensor& x, const Tensor& dy,
                 const Tensor& w, const Tensor& b, Tensor& w_grad, Tensor& b_grad, comm::HaloSide edge) {
  if (edge == comm::HaloSide::kZeros) {
    Plain r{Tensor::host(x.rows(), g.out_features()), Tensor::host(x.rows(), g.in_features())};
    backend.conv_forward(g, x, w, &b, r.y);
    backend.conv_backward_data(g, dy, w, r.dx);
    backend.conv_accumulate_param_grads(g, x, dy, w_grad, &b_grad);
    return r;
  }
  const kernels::PadMode mode =
      edge == comm::HaloSide::kReflect ? kernels::PadMode::kReflect : kernels::PadMode::kPeriodic;
  const kernels::PadGeometry pad{mode, g.in_channels, g.in, g.pad_low, g.pad_high};
  kernels::ConvGeometry valid = g;
  valid.in = pad.padded();
  valid.pad_low.assign(g.dims(), 0);
  valid.pad_high.assign(g.dims(), 0);
  kernels::complete_conv_geometry(valid);
  Tensor padded = Tensor::host(x.rows(), pad.out_features()), d_padded = Tensor::host(x.rows(), pad.out_features());
  Plain r{Tensor::host(x.rows(), g.out_features()), Tensor::host(x.rows(), g.in_features())};
  backend.pad_forward(pad, x, padded);
  backend.conv_forward(valid, padded, w, &b, r.y);
  backend.conv_backward_data(valid, dy, w, d_padded);
  backend.pad_backward(pad, d_padded, r.dx);
  backend.conv_accumulate_param_grads(valid, padded, dy, w_grad, &b_grad);
  return r;
}

void expect_near(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    const float tolerance = 1e-5f * std::max(1.0f, std::fabs(want.data()[i]));
    ASSERT_NEAR(got.data()[i], want.data()[i], tolerance) << what << " element " << i << " (one block vs plain)";
  }
}

class DomainConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(DomainConvTest, BlocksGiveTheWholeFieldBits) {
  const ConvCase& c = GetParam();
  kernels::CpuBackend backend;
  Runs runs(c.split);
  const kernels::ConvGeometry g = whole_conv(c.split.global, c.in_channels, c.out_channels, c.kernel, c.dilation);
  DomainConv split(backend, runs.domain.field(), g, true, "conv", c.edge);
  DomainConv whole(backend, runs.whole->field(), g, true, "conv", c.edge);
  const Tensor w = random_tensor(g.out_channels, g.weight_cols(), 1), b = random_tensor(1, g.out_channels, 2);
  const int64_t points = points_of(c.split.global);
  Tensor plain_w = Tensor::host(w.rows(), w.cols()), plain_b = Tensor::host(1, g.out_channels);
  for (unsigned m = 0; m < 2; ++m) {  // two micro-batches of one step
    const Tensor x = random_tensor(c.samples, c.in_channels * points, 10 + m);
    const Tensor dy = random_tensor(c.samples, c.out_channels * points, 20 + m);
    const Tensor x_padded = whole.pad_input(x);
    const Tensor y = whole.forward(x_padded, w, &b), dx = whole.backward_data(dy, w);
    whole.accumulate_param_grads(x_padded, dy);
    const Plain plain = plain_conv(backend, g, x, dy, w, b, plain_w, plain_b, c.edge);
    expect_near(y, plain.y, "forward output");
    expect_near(dx, plain.dx, "dx");

    const Tensor x_block_padded = split.pad_input(runs.cut(x, c.in_channels));
    EXPECT_EQ(runs.domain.channel().last_call().bytes_sent,
              fill_bytes(c.split, c.samples, c.in_channels, g.pad_low, g.pad_high, c.edge));
    expect_bits(split.forward(x_block_padded, w, &b), runs.cut(y, c.out_channels), "forward output");
    const Tensor dy_block = runs.cut(dy, c.out_channels);
    expect_bits(split.backward_data(dy_block, w), runs.cut(dx, c.in_channels), "dx");
    EXPECT_EQ(runs.domain.channel().last_call().bytes_sent,
              fill_bytes(c.split, c.samples, c.out_channels, g.pad_high, g.pad_low, c.edge))
        << "the dy halo is the forward's mirrored";
    split.accumulate_param_grads(x_block_padded, dy_block);
  }
  Tensor whole_w = Tensor::host(w.rows(), w.cols()), whole_b = Tensor::host(1, g.out_channels);
  Tensor split_w = Tensor::host(w.rows(), w.cols()), split_b = Tensor::host(1, g.out_channels);
  whole.finish_step(whole_w, &whole_b);
  split.finish_step(split_w, &split_b);
  expect_near(whole_w, plain_w, "weight gradient");
  expect_near(whole_b, plain_b, "bias gradient");
  expect_bits(split_w, whole_w, "weight gradient");
  expect_bits(split_b, whole_b, "bias gradient");
  // The gather: this rank's tiles (index + weights + bias each) to each of the 3 others; the whole run sends nothing.
  const int64_t held = runs.domain.field().grid().block_tiles();
  EXPECT_EQ(runs.domain.gather().last_call().bytes_sent,
            3 * held * static_cast<int64_t>(sizeof(int64_t) + (w.size() + b.size()) * sizeof(float)));
  EXPECT_EQ(runs.whole->channel().totals().bytes_sent + runs.whole->gather().totals().bytes_sent, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Splits, DomainConvTest,
    ::testing::Values(ConvCase{"2d_uneven_3x3", kUneven2d, {3, 3}, {1, 1}},
                      ConvCase{"2d_uneven_even_kernel_4x2", kUneven2d, {4, 2}, {1, 1}},
                      ConvCase{"2d_uneven_3x3_dilation2", kUneven2d, {3, 3}, {2, 2}},
                      ConvCase{"3d_2x2x1_3x3x2", k3d, {3, 3, 2}, {1, 1, 1}, 1, 2, 3},
                      ConvCase{"2d_uneven_3x3_zeros", kUneven2d, {3, 3}, {1, 1}, 2, 3, 4, comm::HaloSide::kZeros},
                      ConvCase{"2d_uneven_4x2_dilation2_zeros", kUneven2d, {4, 2}, {2, 1}, 2, 3, 4,
                               comm::HaloSide::kZeros},
                      ConvCase{"3d_2x2x1_3x3x2_zeros", k3d, {3, 3, 2}, {1, 1, 1}, 1, 2, 3, comm::HaloSide::kZeros},
                      ConvCase{"2d_uneven_3x3_reflect", kUneven2d, {3, 3}, {1, 1}, 2, 3, 4, comm::HaloSide::kReflect},
                      ConvCase{"2d_uneven_4x2_dilation2_reflect", kUneven2d, {4, 2}, {2, 1}, 2, 3, 4,
                               comm::HaloSide::kReflect},
                      ConvCase{"3d_2x2x1_3x3x2_reflect", k3d, {3, 3, 2}, {1, 1, 1}, 1, 2, 3,
                               comm::HaloSide::kReflect}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

// A distribution over the channels at every point (cross entropy's target).
Tensor distributions(int64_t samples, int64_t channels, int64_t points, unsigned seed) {
  Tensor t = random_tensor(samples, channels * points, seed);
  for (int64_t n = 0; n < samples; ++n) {
    for (int64_t p = 0; p < points; ++p) {
      float sum = 0.0f;
      for (int64_t c = 0; c < channels; ++c) sum += (t.at(n, c * points + p) += 1.5f);
      for (int64_t c = 0; c < channels; ++c) t.at(n, c * points + p) /= sum;
    }
  }
  return t;
}

void check_loss(kernels::FieldLoss loss, const Split& s) {
  kernels::CpuBackend backend;
  Runs runs(s);
  const int64_t channels = 3, points = points_of(s.global);
  const Tensor pred = random_tensor(2, channels * points, 30), target = distributions(2, channels, points, 31);
  Tensor whole_grad = Tensor::host(2, channels * points);
  const double whole =
      domain_field_loss(backend, runs.whole->field(), loss, channels, pred, target, 0.5f, whole_grad, "loss");
  Tensor grad = Tensor::host(2, channels * runs.domain.field().grid().block_points());
  const double split = domain_field_loss(backend, runs.domain.field(), loss, channels, runs.cut(pred, channels),
                                         runs.cut(target, channels), 0.5f, grad, "loss");
  EXPECT_EQ(std::memcmp(&split, &whole, sizeof(double)), 0) << split << " vs " << whole;
  expect_bits(grad, runs.cut(whole_grad, channels), "loss gradient");
}

TEST(DomainLossTest, MseIsTheWholeFieldValueOnEveryRank) {
  check_loss(kernels::FieldLoss::kMse, kUneven2d);
  check_loss(kernels::FieldLoss::kMse, k3d);
}

TEST(DomainLossTest, ChannelCrossEntropyIsTheWholeFieldValueOnEveryRank) {
  check_loss(kernels::FieldLoss::kChannelCrossEntropy, kUneven2d);
}

// Every rank must see the same refusal, naming the tile (no rank may be left waiting for another).
void expect_refused(comm::TileGather& gather, const std::vector<int64_t>& tiles, const std::string& message) {
  const std::vector<float> values(tiles.size(), 1.0f);
  try {
    gather.all_tiles(tiles, values, 1, 4, "test partials");
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(TileGatherTest, MissingAndRepeatedTilesAreRefusedOnEveryRank) {
  comm::HaloChannel channel(MPI_COMM_WORLD);
  comm::TileGather gather(channel);
  const int rank = testing::world_rank();
  const std::vector<int64_t> own = {3 - static_cast<int64_t>(rank)};  // rank order is not tile order
  const std::vector<float> all = gather.all_tiles(own, std::vector<float>{10.0f * static_cast<float>(rank)}, 1, 4,
                                                  "test partials");
  EXPECT_EQ(all, (std::vector<float>{30.0f, 20.0f, 10.0f, 0.0f})) << "not in tile order";
  EXPECT_EQ(gather.last_call().bytes_sent, 3 * static_cast<int64_t>(sizeof(int64_t) + sizeof(float)));
  expect_refused(gather, rank == 3 ? std::vector<int64_t>{} : own, "tile 0 of 4 came from no rank");
  expect_refused(gather, rank == 3 ? std::vector<int64_t>{2} : own, "tile 2 came from world ranks 1, 3");
  expect_refused(gather, rank == 3 ? std::vector<int64_t>{4} : own, "world rank 3 sent tile 4, outside 0 .. 3");
}

// A block layout and a tile grid that describe different blocks, and a level whose block is not whole points, are
// refused by name (no message: a one-rank channel).
TEST(DomainFieldTest, MismatchedBlockAndTileGridAreRefused) {
  comm::HaloChannel channel(MPI_COMM_SELF);
  comm::TileGather gather(channel);
  comm::HaloGrid grid;
  grid.block_extents = {{16}, {16}};
  grid.halo_low = grid.halo_high = {0, 0};
  const comm::HaloBlock block = comm::halo_block_of(grid, 1, 1, 0, 1);
  try {
    DomainField(channel, gather, block, kernels::TileGrid{{16, 16}, {4, 4}, {0, 4}, {16, 12}});
    ADD_FAILURE() << "a tile grid of another block was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("spatial dimension 2: the block grid puts the block at 0 + 16 of 16, the "
                                         "tile grid at 4 + 12 of 16"),
              std::string::npos)
        << e.what();
  }
  const DomainField field(channel, gather, block, kernels::TileGrid{{16, 16}, {4, 4}, {0, 0}, {16, 16}});
  EXPECT_EQ(field.coarsened({4, 4}).grid().tile, (std::vector<int64_t>{1, 1}));
  EXPECT_THROW(field.coarsened({8, 1}), Error);  // the tile 4 is not divisible by 8
}

}  // namespace
}  // namespace sluice::runtime
