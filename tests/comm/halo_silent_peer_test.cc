// A rank that does not take part in a halo exchange (core/comm/halo_exchange.h), on 4 real MPI ranks in a 2 x 2
// block grid: its neighbours get a TIMEOUT naming it and the operation within comm.timeout. Its own binary: a
// timeout marks the process's communication abandoned (request_wait.h), which no later test should inherit.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/halo_exchange.h"
#include "core/comm/halo_layout.h"
#include "core/comm/wait_settings.h"
#include "core/common/error.h"
#include "tests/mpi_world.h"

namespace sluice::comm {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

TEST(HaloSilentPeer, ASilentNeighbourIsNamedInATimeoutWithinTheBound) {
  if (world_size() != 4) GTEST_SKIP() << "needs 4 ranks";
  const int me = world_rank(), silent = 3;
  HaloGrid grid;
  grid.block_extents = {{7, 5}, {6, 6}};
  grid.halo_low = {1, 1};
  grid.halo_high = {1, 1};
  const HaloBlock layout = halo_block_of(grid, 2, 2, me, 4);
  HaloChannel channel(MPI_COMM_WORLD);  // collective: before the silent rank stops
  const WaitSettings saved = wait_settings();
  WaitSettings quick = saved;
  quick.timeout_seconds = 0.5;
  set_wait_settings(quick);
  std::vector<float> block(static_cast<size_t>(layout.block_floats()), 1.0f);
  std::vector<float> padded(static_cast<size_t>(layout.padded_floats()));
  // Stands for a stopped rank: it reaches the exchange only after the others have given up.
  if (me == silent) std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  const auto t0 = std::chrono::steady_clock::now();
  std::string text;
  ErrorCode code = ErrorCode::kInternal;
  try {
    halo_fill(channel, layout, block.data(), padded.data());
  } catch (const Error& e) {
    text = e.what();
    code = e.code();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  set_wait_settings(saved);
  if (me != silent) {
    EXPECT_EQ(code, ErrorCode::kTimeout) << text;
    EXPECT_NE(text.find("halo fill, spatial dimension"), std::string::npos) << text;
    EXPECT_NE(text.find("no answer within 0.5 s"), std::string::npos) << text;
    EXPECT_LT(waited, 1.8) << "the wait was not bounded by comm.timeout";
    // Rank 3's neighbours (2 along dimension 1, 1 along dimension 2) name it; rank 0 names rank 1, which stopped
    // answering because it timed out itself (the runtime's agreement names the silent rank for all).
    const std::string named = "world rank " + std::to_string(me == 0 ? 1 : silent);
    EXPECT_NE(text.find("neighbour, " + named), std::string::npos) << text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace sluice::comm
