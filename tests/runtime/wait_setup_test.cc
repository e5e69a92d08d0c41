// comm.wait: auto, resolved per node (core/runtime/wait_setup.h), counts the cores the node's ranks may run on
// together. Issue 17: with one core each (mpirun --bind-to core) every rank saw 1 core for 2 ranks and chose block,
// whose sleeps answered messages up to 1 ms late; two ranks on a core each must not block (they get adaptive, issue
// 28), two ranks sharing one core must block. Run on 2 ranks; each test binds the ranks itself and restores their
// masks afterwards.
#include "core/runtime/wait_setup.h"

#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include <set>
#include <vector>

#include "core/comm/wait_settings.h"
#include "core/runtime/node_ranks.h"
#include "tests/mpi_world.h"

namespace sluice::runtime {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

// The cores this process may run on now, in increasing order.
std::vector<int> allowed_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return {};
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mask)) cores.push_back(c);
  }
  return cores;
}

// Binds this process to one core for the scope, then gives it its old mask back.
class BoundToCore {
 public:
  explicit BoundToCore(int core) {
    CPU_ZERO(&saved_);
    sched_getaffinity(0, sizeof saved_, &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core, &one);
    ok_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~BoundToCore() { sched_setaffinity(0, sizeof saved_, &saved_); }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

std::vector<int> gather(int value) {
  std::vector<int> all(static_cast<size_t>(world_size()));
  MPI_Allgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return all;
}

comm::WaitPolicy auto_policy_resolved() {
  config::CommSpec spec;  // wait: auto
  apply_wait_settings(spec, MPI_COMM_WORLD);
  return comm::wait_settings().policy;
}

TEST(CoresOfNodeRanks, IsTheUnionOfTheRanksMasks) {
  const std::vector<int> cores = allowed_cores();
  ASSERT_FALSE(cores.empty());
  const int chosen = cores[static_cast<size_t>(world_rank()) % cores.size()];
  BoundToCore bound(chosen);
  ASSERT_TRUE(bound.ok());
  const std::vector<int> all = gather(chosen);
  EXPECT_EQ(cores_of_node_ranks(MPI_COMM_WORLD), static_cast<int>(std::set<int>(all.begin(), all.end()).size()));
}

TEST(WaitSetup, AutoAdaptsWhenEveryRankIsBoundToACoreOfItsOwn) {
  const std::vector<int> cores = allowed_cores();
  const int chosen = cores.empty() ? -1 : cores[static_cast<size_t>(world_rank()) % cores.size()];
  const std::vector<int> all = gather(chosen);
  if (std::set<int>(all.begin(), all.end()).size() != all.size() || chosen < 0) {
    GTEST_SKIP() << "the ranks cannot be given a core each here (too few cores in their masks)";  // on every rank
  }
  BoundToCore bound(chosen);
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(auto_policy_resolved(), comm::WaitPolicy::kAdaptive);
}

TEST(WaitSetup, AutoBlocksWhenTheRanksShareOneCore) {
  const std::vector<int> cores = allowed_cores();
  ASSERT_FALSE(cores.empty());
  int shared = cores.front();  // the launcher may have bound each rank elsewhere: bind them all to the lowest one
  MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  BoundToCore bound(shared);
  int everyone_bound = bound.ok() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &everyone_bound, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!everyone_bound) GTEST_SKIP() << "not every rank may run on core " << shared;  // the same on every rank
  EXPECT_EQ(auto_policy_resolved(), comm::WaitPolicy::kBlock);
}

}  // namespace
}  // namespace sluice::runtime
