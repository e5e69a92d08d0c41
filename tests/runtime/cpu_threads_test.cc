// The cpu_threads `auto` rule: bound ranks use the cores they are bound to; unbound ranks share the node's cores.
// A fixed count is taken as is up to the rank's cores, refused above them.
#include "core/runtime/cpu_threads.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"

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

TEST(CpuThreads, AFixedCountAboveTheRanksCoresIsRefused) {
  EXPECT_EQ(fixed_cpu_threads(2, 2), 2);
  EXPECT_EQ(fixed_cpu_threads(1, 64), 1);
  EXPECT_EQ(fixed_cpu_threads(48, 0), 48);  // affinity unknown: nothing to check against
  try {
    fixed_cpu_threads(32, 4);
    ADD_FAILURE() << "32 threads on 4 cores were accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig);
    EXPECT_EQ(std::string(error.what()).rfind("config: cpu_threads 32 is more than the 4 core(s) in this rank's "
                                              "affinity mask (sched_getaffinity): set cpu_threads to at most 4",
                                              0),
              0u)
        << error.what();
  }
}

}  // namespace
}  // namespace sluice::runtime
