// The cpu_threads `auto` rule: bound ranks use the cores they are bound to; unbound ranks share the node's cores.
#include "core/runtime/cpu_threads.h"

#include <gtest/gtest.h>

namespace sluice::runtime {
namespace {

TEST(CpuThreads, UnboundRanksShareTheNodesCores) {
  EXPECT_EQ(auto_cpu_threads(2, 2, 1), 2);   // 1 rank on a 2-core node: both cores
  EXPECT_EQ(auto_cpu_threads(2, 2, 2), 1);   // 2 ranks: one each
  EXPECT_EQ(auto_cpu_threads(2, 2, 4), 1);   // oversubscribed: never below 1
  EXPECT_EQ(auto_cpu_threads(64, 64, 8), 8);
  EXPECT_EQ(auto_cpu_threads(64, 64, 3), 21);  // the remainder stays idle rather than oversubscribe
  EXPECT_EQ(auto_cpu_threads(0, 16, 4), 4);    // affinity unknown: treated as unbound
}

TEST(CpuThreads, BoundRanksUseTheCoresTheyAreBoundTo) {
  EXPECT_EQ(auto_cpu_threads(1, 2, 2), 1);    // mpirun --bind-to core
  EXPECT_EQ(auto_cpu_threads(4, 64, 16), 4);  // Slurm --cpus-per-task=4 with task binding
  EXPECT_EQ(auto_cpu_threads(8, 64, 1), 8);   // bound is bound, even when alone on the node
}

}  // namespace
}  // namespace sluice::runtime
