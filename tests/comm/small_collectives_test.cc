// The bounded set-up collectives, ping-pong and communicator duplicate of core/comm (small_collectives.h,
// ping_pong.h, duplicate_comm.h) on real MPI ranks: the values every rank gets, the arguments refused, and a
// duplicate that returns errors instead of aborting.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "core/comm/duplicate_comm.h"
#include "core/comm/ping_pong.h"
#include "core/comm/small_collectives.h"
#include "core/common/error.h"
#include "tests/mpi_world.h"

namespace sluice::comm {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

TEST(SmallCollectives, GatherMinSumAndOrGiveEveryRankTheSameAnswer) {
  const int r = world_rank(), n = world_size();
  const std::vector<int> all = all_gather_ints(MPI_COMM_WORLD, {r, 10 * r}, "test gather");
  ASSERT_EQ(all.size(), 2u * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(all[2 * i], i);
    EXPECT_EQ(all[2 * i + 1], 10 * i);
  }
  // 64-bit values keep their high bits (a field's extents may pass 2^31 points)
  const int64_t big = (int64_t{1} << 40) + 3;
  const std::vector<int64_t> wide = all_gather_int64s(MPI_COMM_WORLD, {big * r, -r}, "test gather int64");
  ASSERT_EQ(wide.size(), 2u * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(wide[2 * i], big * i);
    EXPECT_EQ(wide[2 * i + 1], -i);
  }
  EXPECT_EQ(all_min(MPI_COMM_WORLD, 5 + r, "test min"), 5);
  double sums[2] = {1.0, 0.5 * r};
  all_sum(MPI_COMM_WORLD, sums, 2, "test sum");
  EXPECT_EQ(sums[0], n);
  EXPECT_EQ(sums[1], 0.25 * n * (n - 1));
  unsigned char bits[2] = {static_cast<unsigned char>(1u << (r % 8)), 0};
  all_bitwise_or(MPI_COMM_WORLD, bits, 2, "test or");
  EXPECT_EQ(bits[0], static_cast<unsigned char>((1u << std::min(n, 8)) - 1));
  EXPECT_EQ(bits[1], 0);
}

TEST(PingPong, EveryRankGetsRankAsTimes) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const std::vector<double> times = measure_one_way_seconds(MPI_COMM_WORLD, 1, 0, 256, 7);
  ASSERT_EQ(times.size(), 7u);
  for (const double t : times) EXPECT_GT(t, 0.0);
  // Every rank returns rank 1's measurements, bit for bit.
  std::vector<double> all(times.size() * static_cast<size_t>(world_size()));
  MPI_Allgather(times.data(), 7, MPI_DOUBLE, all.data(), 7, MPI_DOUBLE, MPI_COMM_WORLD);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], times[i % 7]) << "rank " << i / 7;
}

TEST(PingPong, RefusesBadArgumentsNamingThem) {
  const int n = world_size();
  for (const auto& [a, b, floats, repetitions] : std::vector<std::tuple<int, int, int64_t, int>>{
           {0, 0, 8, 1}, {0, n, 8, 1}, {-1, 0, 8, 1}, {0, 1, 0, 1}, {0, 1, 8, 0}}) {
    try {
      measure_one_way_seconds(MPI_COMM_WORLD, a, b, floats, repetitions);
      ADD_FAILURE() << "accepted a=" << a << " b=" << b << " floats=" << floats << " repetitions=" << repetitions;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("ping-pong"), std::string::npos) << e.what();
    }
  }
}

TEST(DuplicateComm, IsAPrivateCommunicatorThatReturnsErrors) {
  const DuplicateComm dup(MPI_COMM_WORLD, "test");
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(dup.get(), MPI_COMM_WORLD, &result);
  EXPECT_EQ(result, MPI_CONGRUENT);  // same ranks in the same order, another context: no message crosses
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(dup.get(), &handler);
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
}

}  // namespace
}  // namespace sluice::comm
