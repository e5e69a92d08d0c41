// MpiGroup::start_ordered_sum: every rank must end up with the sum over ranks 0..size-1 added in that order,
// bit for bit what the former all-gather implementation produced, whatever the length, the chunking, how many
// sums are in flight and in which order each rank completes them. Run with 1, 2, 3 and 4 ranks.
#include <Random123/philox.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/mpi_transport.h"
#include "core/common/error.h"
#include "tests/mpi_world.h"

namespace sluice::comm {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

// Rank `rank`'s contribution for element i of the sum named `salt`. Large values of both signs next to small
// ones make float addition non-associative (1e8 + 1 - 1e8 is 0, 1e8 - 1e8 + 1 is 1), so any other order of
// addition changes bits. Every rank can compute every rank's values, hence the expected sum, on its own.
float contribution(int rank, int64_t i, uint32_t salt) {
  r123::Philox4x32 philox;
  const r123::Philox4x32::ctr_type counter = {{static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32), 0, 0}};
  const r123::Philox4x32::key_type key = {{static_cast<uint32_t>(rank), salt}};
  const r123::Philox4x32::ctr_type bits = philox(counter, key);
  switch (bits[0] % 4) {
    case 0: return 1e8f;
    case 1: return -1e8f;
    case 2: return 1.0f;
    default: return static_cast<float>(bits[1]) / 4294967296.0f - 0.5f;  // in [-0.5, 0.5)
  }
}

std::vector<float> my_contribution(int64_t count, uint32_t salt) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[i] = contribution(world_rank(), i, salt);
  return values;
}

// The per-element arithmetic of the former implementation: acc = v0; acc += v1; ...; acc += v(size-1).
std::vector<float> rank_ordered_sum(int64_t count, uint32_t salt) {
  std::vector<float> sum(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    float acc = contribution(0, i, salt);
    for (int r = 1; r < world_size(); ++r) acc += contribution(r, i, salt);
    sum[i] = acc;
  }
  return sum;
}

// Index of the first element whose bits differ, or -1.
int64_t first_bit_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x = 0, y = 0;
    std::memcpy(&x, &a[i], sizeof x);
    std::memcpy(&y, &b[i], sizeof y);
    if (x != y) return static_cast<int64_t>(i);
  }
  return -1;
}

void expect_rank_ordered_sum(const std::vector<float>& actual, uint32_t salt) {
  const std::vector<float> expected = rank_ordered_sum(static_cast<int64_t>(actual.size()), salt);
  const int64_t at = first_bit_difference(actual, expected);
  EXPECT_EQ(at, -1) << "rank " << world_rank() << ", sum " << salt << " of " << actual.size()
                    << " floats: element " << at << " is " << (at >= 0 ? actual[at] : 0.0f) << ", expected "
                    << (at >= 0 ? expected[at] : 0.0f);
}

// Lengths: empty, shorter than the number of ranks, a multiple of 2, 3 and 4, not divisible by 2, 3 or 4,
// and large (3M floats, ~12 MB per rank).
class OrderedSumLengthTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(OrderedSumLengthTest, WaitGivesRankOrderedSumBitForBit) {
  MpiGroup group(MPI_COMM_WORLD);
  const uint32_t salt = 100;
  std::vector<float> data = my_contribution(GetParam(), salt);
  group.start_ordered_sum(data.data(), GetParam())->wait();
  expect_rank_ordered_sum(data, salt);
}

TEST_P(OrderedSumLengthTest, PollingTestAloneCompletesBothPhases) {
  MpiGroup group(MPI_COMM_WORLD);
  const uint32_t salt = 200;
  std::vector<float> data = my_contribution(GetParam(), salt);
  std::unique_ptr<Request> sum = group.start_ordered_sum(data.data(), GetParam());
  while (!sum->test()) {
  }
  expect_rank_ordered_sum(data, salt);
  EXPECT_TRUE(sum->test()) << "a completed sum must stay complete";
}

TEST_P(OrderedSumLengthTest, SplitIntoSeveralExchangesWhenCapped) {
  for (const int64_t cap : {1, 2, 5, 64, 1000003}) {
    SCOPED_TRACE("max_floats_per_exchange " + std::to_string(cap));
    if (GetParam() / cap > 1000) continue;  // thousands of tiny collectives prove nothing more
    MpiGroup group(MPI_COMM_WORLD, cap);
    const uint32_t salt = 300 + static_cast<uint32_t>(cap);
    std::vector<float> data = my_contribution(GetParam(), salt);
    group.start_ordered_sum(data.data(), GetParam())->wait();
    expect_rank_ordered_sum(data, salt);
  }
}

INSTANTIATE_TEST_SUITE_P(Lengths, OrderedSumLengthTest, ::testing::Values(0, 1, 2, 3, 12, 31, 1001, 3000001));

// Without this the tests above could not tell rank order from any other order.
TEST(OrderedSumTestData, AnotherAdditionOrderChangesBits) {
  if (world_size() < 3) GTEST_SKIP() << "two addends commute exactly: order only matters from 3 ranks on";
  const int64_t count = 1001;
  std::vector<float> reversed(count);
  for (int64_t i = 0; i < count; ++i) {
    float acc = contribution(world_size() - 1, i, 100);
    for (int r = world_size() - 2; r >= 0; --r) acc += contribution(r, i, 100);
    reversed[i] = acc;
  }
  EXPECT_NE(first_bit_difference(reversed, rank_ordered_sum(count, 100)), -1);
}

// The trainer keeps one sum per pipeline stage in flight and waits for them at the end of the step. Here each
// rank completes them in its own order (reverse, forward, polling round-robin from a rank-dependent start), so
// ranks notice the end of phase 1 in different orders: phase 2 must still start in the same order everywhere.
TEST(OrderedSumOverlap, SumsInFlightCompletedInRankDependentOrders) {
  MpiGroup group(MPI_COMM_WORLD);
  const std::vector<int64_t> lengths = {1001, 3, 250000, 17, 0, 40000};
  std::vector<std::vector<float>> data;
  std::vector<std::unique_ptr<Request>> sums;
  for (size_t k = 0; k < lengths.size(); ++k) {
    data.push_back(my_contribution(lengths[k], 400 + static_cast<uint32_t>(k)));
    sums.push_back(group.start_ordered_sum(data[k].data(), lengths[k]));
  }
  const size_t n = sums.size();
  switch (world_rank() % 3) {
    case 0:
      for (size_t k = n; k-- > 0;) sums[k]->wait();
      break;
    case 1:
      for (size_t k = 0; k < n; ++k) sums[k]->wait();
      break;
    default: {
      std::vector<bool> done(n, false);
      size_t remaining = n;
      for (size_t k = static_cast<size_t>(world_rank()) % n; remaining > 0; k = (k + 1) % n) {
        if (!done[k] && sums[k]->test()) {
          done[k] = true;
          --remaining;
        }
      }
    }
  }
  for (size_t k = 0; k < n; ++k) {
    SCOPED_TRACE("sum " + std::to_string(k));
    expect_rank_ordered_sum(data[k], 400 + static_cast<uint32_t>(k));
  }
}

// Blocking collectives on the same group while sums are in flight, with some ranks already past phase 1 of a
// sum (they polled it) and others not: the sums must not get mixed up with the barrier and the other calls.
// (MPI forbids ranks ordering collectives on one communicator differently, hence the sums' private duplicate;
// Open MPI 4.1 happens to keep blocking and non-blocking collectives apart, so there this checks results only.)
TEST(OrderedSumOverlap, BlockingGroupCollectivesWhileSumsInFlight) {
  MpiGroup group(MPI_COMM_WORLD);
  std::vector<float> first = my_contribution(5000, 500);
  std::vector<float> second = my_contribution(77, 501);
  std::unique_ptr<Request> first_sum = group.start_ordered_sum(first.data(), 5000);
  std::unique_ptr<Request> second_sum = group.start_ordered_sum(second.data(), 77);
  if (world_rank() % 2 == 0) {
    for (int i = 0; i < 100000; ++i) first_sum->test();
  }
  group.barrier();
  double rank_as_double = world_rank();
  group.ordered_sum(&rank_as_double, 1);
  EXPECT_EQ(rank_as_double, world_size() * (world_size() - 1) / 2.0);
  EXPECT_FALSE(group.any(false));
  second_sum->wait();
  first_sum->wait();
  expect_rank_ordered_sum(first, 500);
  expect_rank_ordered_sum(second, 501);
}

// An abandoned request (error path) finishes before its buffers go, so the other ranks are not left hanging.
TEST(OrderedSumLifetime, DestroyingAnUnfinishedSumCompletesIt) {
  MpiGroup group(MPI_COMM_WORLD);
  std::vector<float> data = my_contribution(4321, 600);
  group.start_ordered_sum(data.data(), 4321).reset();
  expect_rank_ordered_sum(data, 600);
}

TEST(OrderedSumSingleRank, GroupOfOneLeavesDataUntouched) {
  MpiGroup self(MPI_COMM_SELF);
  std::vector<float> data = my_contribution(1001, 700);
  const std::vector<float> before = data;
  std::unique_ptr<Request> sum = self.start_ordered_sum(data.data(), 1001);
  EXPECT_TRUE(sum->test());
  sum->wait();
  EXPECT_EQ(first_bit_difference(data, before), -1);
}

template <typename Call>
void expect_invalid_argument(Call call, const std::string& message) {
  try {
    call();
    ADD_FAILURE() << "expected sluice::Error: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(OrderedSumInput, RejectsNegativeCountNullDataAndZeroCap) {
  MpiGroup group(MPI_COMM_WORLD);
  float value = 1.0f;
  expect_invalid_argument([&] { group.start_ordered_sum(&value, -1); },
                          "start_ordered_sum: count must be non-negative, got -1");
  expect_invalid_argument([&] { group.start_ordered_sum(nullptr, 8); },
                          "start_ordered_sum: data is null but count is 8");
  expect_invalid_argument([] { MpiGroup capped(MPI_COMM_WORLD, 0); },
                          "MpiGroup: max_floats_per_exchange must be at least 1, got 0");
}

}  // namespace
}  // namespace sluice::comm
