// Node-local numbering from MPI (core/runtime/node_ranks.h), on 4 ranks of one node: everybody is on the node,
// and a rank's place among a subset of them (the GPU-driving ranks of a mixed pipeline) skips the others.
#include "core/runtime/node_ranks.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include "core/runtime/placement.h"
#include "tests/mpi_world.h"

namespace sluice::runtime {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

TEST(NodeRanks, EveryRankOfThisTestSharesTheNode) { EXPECT_EQ(ranks_on_this_node(MPI_COMM_WORLD), world_size()); }

TEST(NodeRanks, PlaceAmongMembersSkipsNonMembersInRankOrder) {
  // device: [cuda, cpu] with 2 replicas: world ranks 0 and 2 run the cuda stage.
  const bool cuda_stage = world_rank() % 2 == 0;
  const int index = rank_among_node_peers(MPI_COMM_WORLD, cuda_stage);
  EXPECT_EQ(index, cuda_stage ? world_rank() / 2 : -1);
  // Before this rule both cuda ranks picked their GPU by node-local rank (0 and 2): on a 2-GPU node, GPU 0 twice.
  if (cuda_stage) EXPECT_EQ(device_for_local_rank(index, 2), world_rank() / 2);
}

TEST(NodeRanks, EveryRankAMemberIsTheNodeRankOrder) {
  EXPECT_EQ(rank_among_node_peers(MPI_COMM_WORLD, true), world_rank());
}

}  // namespace
}  // namespace sluice::runtime
