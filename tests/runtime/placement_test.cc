// Node-local rank from the launcher's environment, and the rank -> GPU rule.
#include "core/runtime/placement.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

class NodeLocalRankTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    unsetenv("SLURM_LOCALID");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  }
};

TEST_F(NodeLocalRankTest, ZeroWithoutALauncher) { EXPECT_EQ(node_local_rank(), 0); }

TEST_F(NodeLocalRankTest, ReadsSlurmLocalId) {
  setenv("SLURM_LOCALID", "3", 1);
  EXPECT_EQ(node_local_rank(), 3);
}

TEST_F(NodeLocalRankTest, ReadsOpenMpiLocalRank) {
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5", 1);
  EXPECT_EQ(node_local_rank(), 5);
}

TEST_F(NodeLocalRankTest, SlurmWinsOverOpenMpi) {
  // mpirun inside an allocation sets both; srun's value is the one that matches the job's task layout.
  setenv("SLURM_LOCALID", "2", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "7", 1);
  EXPECT_EQ(node_local_rank(), 2);
}

TEST_F(NodeLocalRankTest, MalformedValueIsAnErrorNamingTheVariable) {
  for (const char* bad : {"", "abc", "-1", "2x", "99999999999"}) {
    setenv("SLURM_LOCALID", bad, 1);
    try {
      node_local_rank();
      ADD_FAILURE() << "no error for SLURM_LOCALID=\"" << bad << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(std::string("SLURM_LOCALID=\"") + bad + "\""), std::string::npos)
          << e.what();
    }
  }
}

TEST_F(NodeLocalRankTest, MalformedOpenMpiValueIsNamedToo) {
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "one", 1);
  try {
    node_local_rank();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("OMPI_COMM_WORLD_LOCAL_RANK"), std::string::npos) << e.what();
  }
}

TEST(DeviceForLocalRank, NoGpuMeansMinusOne) {
  EXPECT_EQ(device_for_local_rank(0, 0), -1);
  EXPECT_EQ(device_for_local_rank(3, 0), -1);
}

TEST(DeviceForLocalRank, OneRankPerGpu) {
  for (int local = 0; local < 4; ++local) EXPECT_EQ(device_for_local_rank(local, 4), local);
}

TEST(DeviceForLocalRank, MoreRanksThanGpusShareRoundRobin) {
  // 8 ranks on a 4-GPU node: ranks 0 and 4 share GPU 0, 1 and 5 share GPU 1, ...
  const int expected[8] = {0, 1, 2, 3, 0, 1, 2, 3};
  for (int local = 0; local < 8; ++local) EXPECT_EQ(device_for_local_rank(local, 4), expected[local]);
}

TEST(DeviceForLocalRank, NegativeArgumentsAreErrors) {
  EXPECT_THROW(device_for_local_rank(-1, 4), Error);
  EXPECT_THROW(device_for_local_rank(0, -2), Error);
  try {
    device_for_local_rank(0, -2);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpus_on_node must be >= 0, got -2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::runtime
