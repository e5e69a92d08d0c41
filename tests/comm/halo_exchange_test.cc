// The periodic halo exchange (core/comm/halo_exchange.h) on 4 real MPI ranks. Every rank generates the same
// global fields, so what each rank's padded block and block gradient must be is computed locally by periodic
// indexing of the global field, without messages: the fill is compared bit for bit; the adjoint bit for bit
// against the sum of every halo copy's gradient (small integers, so any order is exact) and against the
// documented order of additions (random floats), and by the dot-product test <fill(x), y> = <x, adjoint(y)>.
// Closed edges (HaloSide::kZeros / kReflect at the field's global edges): zeros or the mirror there, fewer bytes,
// the adjoint by the dot product. Then a halo wider than a block (refused on every rank before any message), a
// closed side off the edge, a mirror wider than its block. A rank that does not take part: halo_silent_peer_test.cc.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "core/comm/halo_exchange.h"
#include "core/comm/halo_layout.h"
#include "core/common/error.h"
#include "tests/mpi_world.h"

namespace sluice::comm {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

// An index or shape [samples][channels][dims..] (at most 5 entries): on the stack, because the expected values
// are computed point by point and a heap allocation per point is slow under ASan (CI's DWARF unwinding).
class Index {
 public:
  Index() = default;
  Index(std::initializer_list<int64_t> values) {
    for (const int64_t v : values) push_back(v);
  }
  explicit Index(size_t count) : n_(count) {}
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  void push_back(int64_t v) { v_[n_++] = v; }
  int64_t& operator[](size_t i) { return v_[i]; }
  int64_t operator[](size_t i) const { return v_[i]; }
  const int64_t* begin() const { return v_.data(); }
  const int64_t* end() const { return v_.data() + n_; }

 private:
  std::array<int64_t, 5> v_{};
  size_t n_ = 0;
};

// A test layout: the block grid and the field's samples and channels. Block b is world rank b.
struct Case {
  const char* name;
  std::vector<std::vector<int64_t>> extents;  // per spatial dimension, every block's extent
  std::vector<int64_t> low, high;
  int64_t samples, channels;
};

// The cases on 4 ranks: uneven 2 x 2 blocks of a 2-D field with halo widths 1 and 2 (also unequal low/high, and a
// block of 3 narrower than l + h = 4, whose points feed both neighbours' halos), a 3-D field split 2 x 2 x 1 and
// 1 x 2 x 2 (a dimension of one block: a local copy beside messages), a 1-D field in 4 blocks. A width list
// shorter than the dimensions repeats its last width.
std::vector<Case> cases() {
  return {
      {"2d_width1", {{7, 5}, {6, 6}}, {1, 1}, {1, 1}, 3, 2},
      {"2d_width2", {{7, 5}, {6, 6}}, {2, 2}, {2, 2}, 2, 3},
      {"2d_low2_high1", {{7, 5}, {6, 6}}, {2, 1}, {1, 2}, 2, 2},
      {"2d_narrow_block", {{9, 3}, {6, 6}}, {2, 1}, {2, 2}, 1, 2},
      {"3d_2x2x1", {{3, 4}, {4, 3}, {5}}, {1, 2}, {1, 1}, 2, 2},
      {"3d_1x2x2", {{5}, {3, 4}, {4, 3}}, {1, 1}, {2, 1}, 1, 3},
      {"1d_4_blocks", {{5, 4, 3, 6}}, {2}, {3}, 2, 2},
  };
}
int64_t width(const std::vector<int64_t>& widths, size_t d) { return widths[std::min(d, widths.size() - 1)]; }

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

HaloGrid grid_of(const Case& c) {
  HaloGrid grid;
  grid.block_extents = c.extents;
  for (size_t d = 0; d < c.extents.size(); ++d) {
    grid.halo_low.push_back(width(c.low, d));
    grid.halo_high.push_back(width(c.high, d));
  }
  return grid;
}

int blocks_of(const Case& c) {
  int n = 1;
  for (const auto& e : c.extents) n *= static_cast<int>(e.size());
  return n;
}

// Shape helpers: [samples][channels][dims...] flattened, C order.
int64_t volume(const Index& shape) {
  int64_t v = 1;
  for (const int64_t n : shape) v *= n;
  return v;
}
Index unravel(int64_t flat, const Index& shape) {
  Index at(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    at[i] = flat % shape[i];
    flat /= shape[i];
  }
  return at;
}
int64_t ravel(const Index& at, const Index& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + at[i];
  return flat;
}

// Everything about one case a rank needs to compute any rank's expected values.
struct World {
  Case c;
  std::vector<HaloBlock> blocks;  // per block number (= world rank)
  Index global;                   // global extents per spatial dimension
  std::vector<Index> offsets;     // per block: its first global point per dimension

  explicit World(const Case& k) : c(k) {
    const HaloGrid grid = grid_of(k);
    for (int b = 0; b < blocks_of(k); ++b) blocks.push_back(halo_block_of(grid, k.samples, k.channels, b, 4));
    for (const auto& e : k.extents) global.push_back(std::accumulate(e.begin(), e.end(), int64_t{0}));
    for (const HaloBlock& block : blocks) {
      Index off;
      for (const HaloDimension& d : block.dims) {
        off.push_back(std::accumulate(d.block_extents.begin(), d.block_extents.begin() + d.block, int64_t{0}));
      }
      offsets.push_back(off);
    }
  }
  size_t k() const { return global.size(); }
  Index block_shape(int b) const {
    Index s{c.samples, c.channels};
    for (const HaloDimension& d : blocks[b].dims) s.push_back(d.extent());
    return s;
  }
  Index padded_shape(int b) const {
    Index s{c.samples, c.channels};
    for (const HaloDimension& d : blocks[b].dims) s.push_back(d.padded_extent());
    return s;
  }
  Index global_shape() const {
    Index s{c.samples, c.channels};
    for (const int64_t n : global) s.push_back(n);
    return s;
  }
  // The global index [s][c][g..] a padded index of block b copies (periodic).
  Index source_of(int b, const Index& padded) const {
    Index g = padded;
    for (size_t d = 0; d < k(); ++d) {
      const int64_t n = global[d];
      g[2 + d] = ((offsets[b][d] + padded[2 + d] - blocks[b].dims[d].halo_low) % n + n) % n;
    }
    return g;
  }
  // Block b's local index of a global index, or empty when block b does not own it.
  Index local_of(int b, const Index& g) const {
    Index at = g;
    for (size_t d = 0; d < k(); ++d) {
      at[2 + d] = g[2 + d] - offsets[b][d];
      if (at[2 + d] < 0 || at[2 + d] >= blocks[b].dims[d].extent()) return {};
    }
    return at;
  }
};

uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}
// Random floats in (-256, 256) with random exponents, so that sums of them round and their order shows; or small
// integers, whose sums are exact in any order.
float random_value(uint64_t seed, int64_t i) {
  const uint32_t bits = mix(seed * 1000003 + static_cast<uint64_t>(i));
  const float mantissa = static_cast<float>(bits >> 8) / 16777216.0f;  // [0, 1), 24 random bits
  return std::ldexp((bits & 1) ? -mantissa : mantissa, static_cast<int>((bits >> 1) % 17) - 8);
}
float integer_value(uint64_t seed, int64_t i) {
  return static_cast<float>(static_cast<int>(mix(seed * 7919 + static_cast<uint64_t>(i)) % 9) - 4);
}

std::vector<float> global_field(const World& w) {
  std::vector<float> f(static_cast<size_t>(volume(w.global_shape())));
  for (size_t i = 0; i < f.size(); ++i) f[i] = random_value(1, static_cast<int64_t>(i));
  return f;
}

std::vector<float> block_of(const World& w, const std::vector<float>& field, int b) {
  const Index shape = w.block_shape(b);
  std::vector<float> out(static_cast<size_t>(volume(shape)));
  for (int64_t i = 0; i < volume(shape); ++i) {
    Index g = unravel(i, shape);
    for (size_t d = 0; d < w.k(); ++d) g[2 + d] += w.offsets[b][d];
    out[i] = field[ravel(g, w.global_shape())];
  }
  return out;
}

class HaloExchangeTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (world_size() != 4) GTEST_SKIP() << "needs 4 ranks";
  }
};

TEST_P(HaloExchangeTest, FillCopiesThePeriodicGlobalFieldBitForBit) {
  const World w(GetParam());
  const int me = world_rank();
  const std::vector<float> field = global_field(w);
  HaloChannel channel(MPI_COMM_WORLD);
  const Index padded_shape = w.padded_shape(me);
  std::vector<float> padded(static_cast<size_t>(volume(padded_shape)), NAN);
  halo_fill(channel, w.blocks[me], block_of(w, field, me).data(), padded.data());
  int64_t wrong = 0;
  for (int64_t i = 0; i < volume(padded_shape); ++i) {
    const float expected = field[ravel(w.source_of(me, unravel(i, padded_shape)), w.global_shape())];
    if (std::memcmp(&expected, &padded[i], sizeof(float)) != 0 && wrong++ < 5) {
      ADD_FAILURE() << "rank " << me << " padded point " << i << ": " << padded[i] << ", expected " << expected;
    }
  }
  EXPECT_EQ(wrong, 0);
  // Counters: what the paper formula says; over all ranks, every halo point arrived once by message, except
  // those of single-block dimensions (local copies).
  const HaloTraffic& sent = channel.last_call();
  EXPECT_EQ(sent.bytes_sent, halo_bytes_per_fill(w.blocks[me]));
  int64_t to_others = 0;
  for (int r = 0; r < 4; ++r) {
    const bool neighbour = [&] {
      for (const HaloDimension& d : w.blocks[me].dims) {
        if (!d.single_block() && (d.low_rank == r || d.high_rank == r)) return true;
      }
      return false;
    }();
    if (!neighbour) {
      EXPECT_EQ(sent.bytes_to_rank[r], 0) << "rank " << me << " sent to non-neighbour " << r;
    }
    to_others += sent.bytes_to_rank[r];
  }
  EXPECT_EQ(to_others, sent.bytes_sent);
  halo_fill(channel, w.blocks[me], block_of(w, field, me).data(), padded.data());
  EXPECT_EQ(channel.totals().bytes_sent, 2 * sent.bytes_sent);
}

TEST_P(HaloExchangeTest, EveryHaloPointArrivesByMessageOnceWhenEveryDimensionIsSplit) {
  const World w(GetParam());
  for (const auto& e : w.c.extents) {
    if (e.size() == 1) GTEST_SKIP() << "a dimension of one block copies locally";
  }
  const int me = world_rank();
  HaloChannel channel(MPI_COMM_WORLD);
  std::vector<float> block(static_cast<size_t>(volume(w.block_shape(me))), 1.0f);
  std::vector<float> padded(static_cast<size_t>(volume(w.padded_shape(me))));
  halo_fill(channel, w.blocks[me], block.data(), padded.data());
  int64_t sent = channel.last_call().bytes_sent, all_sent = 0;
  MPI_Allreduce(&sent, &all_sent, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  int64_t halo_points = 0;
  for (int b = 0; b < 4; ++b) halo_points += volume(w.padded_shape(b)) - volume(w.block_shape(b));
  EXPECT_EQ(all_sent, halo_points * static_cast<int64_t>(sizeof(float)));
  std::vector<float> gradient(block.size());
  halo_adjoint(channel, w.blocks[me], padded.data(), gradient.data());
  sent = channel.last_call().bytes_sent;
  MPI_Allreduce(&sent, &all_sent, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(all_sent, halo_points * static_cast<int64_t>(sizeof(float)));
}

// Every rank's padded gradient, generated the same on every rank.
std::vector<std::vector<float>> padded_gradients(const World& w, float (*value)(uint64_t, int64_t)) {
  std::vector<std::vector<float>> y;
  for (int b = 0; b < 4; ++b) {
    std::vector<float> g(static_cast<size_t>(volume(w.padded_shape(b))));
    for (size_t i = 0; i < g.size(); ++i) g[i] = value(100 + b, static_cast<int64_t>(i));
    y.push_back(g);
  }
  return y;
}

std::vector<float> adjoint_on_this_rank(const World& w, const std::vector<std::vector<float>>& y) {
  const int me = world_rank();
  HaloChannel channel(MPI_COMM_WORLD);
  std::vector<float> gradient(static_cast<size_t>(volume(w.block_shape(me))), NAN);
  halo_adjoint(channel, w.blocks[me], y[me].data(), gradient.data());
  return gradient;
}

TEST_P(HaloExchangeTest, AdjointAddsEveryHaloCopysGradientOntoItsSource) {
  const World w(GetParam());
  const int me = world_rank();
  const auto y = padded_gradients(w, integer_value);
  // Expected: for every padded point of every block, its gradient onto the global point it copied, if mine.
  std::vector<float> expected(static_cast<size_t>(volume(w.block_shape(me))), 0.0f);
  for (int b = 0; b < 4; ++b) {
    const Index shape = w.padded_shape(b);
    for (int64_t i = 0; i < volume(shape); ++i) {
      const Index local = w.local_of(me, w.source_of(b, unravel(i, shape)));
      if (!local.empty()) expected[ravel(local, w.block_shape(me))] += y[b][i];
    }
  }
  const std::vector<float> got = adjoint_on_this_rank(w, y);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "rank " << me << " point " << i;
}

// The documented order (halo_exchange.h): after dimensions k-1..d are folded, an interior point holds its own
// value, plus the low neighbour's high-halo copy of it, plus the high neighbour's low-halo copy, in that order.
float folded(const World& w, const std::vector<std::vector<float>>& y, int b, const Index& at, size_t d) {
  if (d == w.k()) return y[b][ravel(at, w.padded_shape(b))];
  const HaloDimension& dim = w.blocks[b].dims[d];
  const int64_t i = at[2 + d] - dim.halo_low;  // interior index along d
  float sum = folded(w, y, b, at, d + 1);
  if (i < dim.halo_high) {
    Index from = at;
    from[2 + d] = dim.halo_low + w.blocks[dim.low_rank].dims[d].extent() + i;
    sum += folded(w, y, dim.low_rank, from, d + 1);
  }
  if (i >= dim.extent() - dim.halo_low) {
    Index from = at;
    from[2 + d] = i - (dim.extent() - dim.halo_low);
    sum += folded(w, y, dim.high_rank, from, d + 1);
  }
  return sum;
}

TEST_P(HaloExchangeTest, AdjointAddsInTheDocumentedOrderBitForBit) {
  const World w(GetParam());
  const int me = world_rank();
  const auto y = padded_gradients(w, random_value);
  const std::vector<float> got = adjoint_on_this_rank(w, y);
  const Index shape = w.block_shape(me);
  int64_t wrong = 0;
  for (int64_t i = 0; i < volume(shape); ++i) {
    Index at = unravel(i, shape);
    for (size_t d = 0; d < w.k(); ++d) at[2 + d] += w.blocks[me].dims[d].halo_low;
    const float expected = folded(w, y, me, at, 0);
    if (std::memcmp(&expected, &got[i], sizeof(float)) != 0 && wrong++ < 5) {
      ADD_FAILURE() << "rank " << me << " point " << i << ": " << got[i] << ", expected " << expected;
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST_P(HaloExchangeTest, DotProductOfFillAndAdjointAgree) {
  const World w(GetParam());
  const int me = world_rank();
  HaloChannel channel(MPI_COMM_WORLD);
  std::vector<float> x(static_cast<size_t>(volume(w.block_shape(me))));
  for (size_t i = 0; i < x.size(); ++i) x[i] = random_value(7 + me, static_cast<int64_t>(i));
  const auto y = padded_gradients(w, random_value);
  std::vector<float> fx(y[me].size()), aty(x.size());
  halo_fill(channel, w.blocks[me], x.data(), fx.data());
  halo_adjoint(channel, w.blocks[me], y[me].data(), aty.data());
  double sums[2] = {0.0, 0.0};
  for (size_t i = 0; i < fx.size(); ++i) sums[0] += static_cast<double>(fx[i]) * y[me][i];
  for (size_t i = 0; i < x.size(); ++i) sums[1] += static_cast<double>(x[i]) * aty[i];
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_NEAR(sums[0], sums[1], 1e-5 * (1.0 + std::fabs(sums[0])));
}

// The pipeline's other traffic on the group's communicator, with every tag the exchange could use and the size
// of its first message, pending while a fill runs: the fill must not take it (the exchange has its own
// duplicate), and it must arrive intact afterwards.
TEST_P(HaloExchangeTest, OtherMessagesOnTheGroupCommunicatorAreNotTaken) {
  const World w(GetParam());
  const int me = world_rank();
  const HaloDimension& dim = w.blocks[me].dims[0];
  if (dim.single_block() || dim.halo_low == 0) GTEST_SKIP() << "no message toward the high neighbour";
  constexpr int kTags = 16;
  int64_t strip = w.c.samples * w.c.channels * dim.halo_low;  // the fill's first message to the high neighbour
  for (size_t d = 1; d < w.k(); ++d) strip *= w.blocks[me].dims[d].extent();
  std::vector<float> other(static_cast<size_t>(strip * kTags), -999.0f), received(other.size(), 0.0f);
  std::vector<MPI_Request> requests(2 * kTags);
  for (int tag = 0; tag < kTags; ++tag) {
    MPI_Isend(other.data() + tag * strip, static_cast<int>(strip), MPI_FLOAT, dim.high_rank, tag, MPI_COMM_WORLD,
              &requests[tag]);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the other traffic is on its way before any halo message
  const std::vector<float> field = global_field(w);
  HaloChannel channel(MPI_COMM_WORLD);
  std::vector<float> padded(static_cast<size_t>(volume(w.padded_shape(me))));
  halo_fill(channel, w.blocks[me], block_of(w, field, me).data(), padded.data());
  for (int tag = 0; tag < kTags; ++tag) {
    MPI_Irecv(received.data() + tag * strip, static_cast<int>(strip), MPI_FLOAT, dim.low_rank, tag, MPI_COMM_WORLD,
              &requests[kTags + tag]);
  }
  MPI_Waitall(2 * kTags, requests.data(), MPI_STATUSES_IGNORE);
  EXPECT_EQ(received, other);
  for (int64_t i = 0; i < volume(w.padded_shape(me)); ++i) {
    ASSERT_EQ(padded[i], field[ravel(w.source_of(me, unravel(i, w.padded_shape(me))), w.global_shape())]) << i;
  }
}

// Closed edges (halo_layout.h HaloSide): the sides on the field's global edges are zeros (a conv's padding zeros)
// or the block's own points mirrored (padding reflect), no message crosses them, and the adjoint drops or folds
// back their gradient. Expected by global indexing: a padded point beyond the field in any dimension is zero, or
// the field at the reflected index (corners reflected in both), every other one the field's point. The adjoint by
// the dot-product test with small integers (exact in any order).
void check_closed_edges(const Case& c, HaloSide edge) {
  World w(c);
  for (HaloBlock& block : w.blocks) set_global_edge_fill(block, edge);
  const int me = world_rank();
  std::vector<float> field = global_field(w);
  for (size_t i = 0; i < field.size(); ++i) field[i] = integer_value(3, static_cast<int64_t>(i));
  HaloChannel channel(MPI_COMM_WORLD);
  const Index shape = w.padded_shape(me);
  std::vector<float> padded(static_cast<size_t>(volume(shape)), NAN);
  const std::vector<float> x = block_of(w, field, me);
  halo_fill(channel, w.blocks[me], x.data(), padded.data());
  int64_t wrong = 0;
  for (int64_t i = 0; i < volume(shape); ++i) {
    Index g = unravel(i, shape);
    bool outside = false;
    for (size_t d = 0; d < w.k(); ++d) {
      int64_t at = w.offsets[me][d] + g[2 + d] - w.blocks[me].dims[d].halo_low;
      outside = outside || at < 0 || at >= w.global[d];
      if (at < 0) at = -at;
      if (at >= w.global[d]) at = 2 * (w.global[d] - 1) - at;
      g[2 + d] = at;
    }
    const float expected = outside && edge == HaloSide::kZeros ? 0.0f : field[ravel(g, w.global_shape())];
    if (std::memcmp(&expected, &padded[i], sizeof(float)) != 0 && wrong++ < 5) {
      ADD_FAILURE() << "rank " << me << " padded point " << i << ": " << padded[i] << ", expected " << expected;
    }
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(channel.last_call().bytes_sent, halo_bytes_per_fill(w.blocks[me]));
  HaloBlock wrapping = w.blocks[me];
  set_global_edge_fill(wrapping, HaloSide::kNeighbour);
  bool on_a_split_edge = false;
  for (const HaloDimension& d : w.blocks[me].dims) {
    on_a_split_edge = on_a_split_edge || (!d.single_block() && (d.fill_low != HaloSide::kNeighbour ||
                                                                 d.fill_high != HaloSide::kNeighbour));
  }
  if (on_a_split_edge) EXPECT_LT(channel.last_call().bytes_sent, halo_bytes_per_fill(wrapping));
  const auto y = padded_gradients(w, integer_value);
  std::vector<float> aty(x.size(), NAN);
  halo_adjoint(channel, w.blocks[me], y[me].data(), aty.data());
  double sums[2] = {0.0, 0.0};
  for (size_t i = 0; i < padded.size(); ++i) sums[0] += static_cast<double>(padded[i]) * y[me][i];
  for (size_t i = 0; i < x.size(); ++i) sums[1] += static_cast<double>(x[i]) * aty[i];
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sums[0], sums[1]);
}

TEST_P(HaloExchangeTest, ZeroEdgesFillZerosAndSendNothingAcrossThem) {
  check_closed_edges(GetParam(), HaloSide::kZeros);
}

TEST_P(HaloExchangeTest, ReflectEdgesMirrorTheBlockAndSendNothingAcrossThem) {
  check_closed_edges(GetParam(), HaloSide::kReflect);
}

INSTANTIATE_TEST_SUITE_P(Layouts, HaloExchangeTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(HaloLayout, GridGivesNeighboursRowMajorWithWrapAndRankTable) {
  HaloGrid grid;
  grid.block_extents = {{4, 4}, {3, 3, 3}};
  grid.halo_low = {1, 1};
  grid.halo_high = {1, 1};
  grid.base_rank = 2;
  // Block 4 = (1, 1): dimension 1's neighbours are blocks 1 (0, 1), both sides; dimension 2's are 3 and 5.
  HaloBlock b = halo_block_of(grid, 1, 1, 4, 8);
  EXPECT_EQ(b.dims[0].block, 1);
  EXPECT_EQ(b.dims[1].block, 1);
  EXPECT_EQ(b.dims[0].low_rank, 2 + 1);
  EXPECT_EQ(b.dims[0].high_rank, 2 + 1);
  EXPECT_EQ(b.dims[1].low_rank, 2 + 3);
  EXPECT_EQ(b.dims[1].high_rank, 2 + 5);
  grid.ranks = {7, 6, 5, 4, 3, 2};  // block 5 = (1, 2): high neighbour along dimension 2 wraps to block 3
  b = halo_block_of(grid, 1, 1, 5, 8);
  EXPECT_EQ(b.dims[1].low_rank, 3);
  EXPECT_EQ(b.dims[1].high_rank, 4);
  EXPECT_EQ(even_block_extents(12, 5), (std::vector<int64_t>{3, 3, 2, 2, 2}));
}

void expect_refused(const std::function<void()>& call, const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    for (const std::string& word : words) EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

TEST(HaloLayout, RefusesAHaloWiderThanABlockOnEveryRankBeforeAnyMessage) {
  if (world_size() != 4) GTEST_SKIP() << "needs 4 ranks";
  const int me = world_rank();
  HaloGrid grid;
  grid.block_extents = {{10, 2}, {6, 6}};
  grid.halo_low = {3, 1};
  grid.halo_high = {1, 1};
  // Only the blocks beside the narrow one would read past it, yet every rank refuses.
  expect_refused([&] { halo_block_of(grid, 1, 1, me, 4); },
                 {"spatial dimension 1", "low 3, high 1", "block extents 10, 2"});
  // The same layout built by hand reaches halo_fill's own check, still before any message.
  grid.halo_low = {2, 1};
  HaloBlock block = halo_block_of(grid, 1, 1, me, 4);
  block.dims[0].halo_low = 3;
  HaloChannel channel(MPI_COMM_WORLD);
  std::vector<float> in(static_cast<size_t>(block.block_floats())), out(static_cast<size_t>(block.padded_floats()));
  expect_refused([&] { halo_fill(channel, block, in.data(), out.data()); }, {"spatial dimension 1", "low 3"});
  expect_refused([&] { halo_adjoint(channel, block, out.data(), in.data()); }, {"spatial dimension 1", "low 3"});
  EXPECT_EQ(channel.totals().messages_sent, 0);
  // No stray message was left behind: a valid exchange on the same channel works.
  block.dims[0].halo_low = 2;
  out.resize(static_cast<size_t>(block.padded_floats()));
  halo_fill(channel, block, in.data(), out.data());
  EXPECT_GT(channel.totals().messages_sent, 0);
}

// A zero side only on the field's global edge (else its neighbour would wait for a message), both sides alike on a
// dimension of one block.
TEST(HaloLayout, RefusesAClosedSideOffTheGlobalEdgeAndANarrowMirror) {
  HaloGrid grid;
  grid.block_extents = {{4, 4}, {6}};
  grid.halo_low = {1, 1};
  grid.halo_high = {1, 1};
  HaloBlock block = halo_block_of(grid, 1, 1, 0, 2);
  set_global_edge_fill(block, HaloSide::kZeros);
  EXPECT_EQ(block.dims[0].fill_low, HaloSide::kZeros);
  EXPECT_EQ(block.dims[0].fill_high, HaloSide::kNeighbour);
  EXPECT_NO_THROW(check_halo_block(block, 2, 0));
  block.dims[0].fill_high = HaloSide::kZeros;
  expect_refused([&] { check_halo_block(block, 2, 0); },
                 {"spatial dimension 1", "block 0 has a zero or reflected high halo"});
  block.dims[0].fill_high = HaloSide::kNeighbour;
  block.dims[1].fill_high = HaloSide::kNeighbour;
  expect_refused([&] { check_halo_block(block, 2, 0); }, {"spatial dimension 2 has one block", "the same way"});
  // A mirror needs width + 1 points of the block.
  grid.block_extents = {{1, 7}, {6}};
  HaloBlock narrow = halo_block_of(grid, 1, 1, 0, 2);
  set_global_edge_fill(narrow, HaloSide::kReflect);
  expect_refused([&] { check_halo_block(narrow, 2, 0); },
                 {"spatial dimension 1", "block 0 is 1 points wide, but a reflected halo of 1 needs 2"});
}

}  // namespace
}  // namespace sluice::comm
