// The rules of pipeline.transport (core/runtime/transport_choice.h), one fact at a time.
#include "core/runtime/transport_choice.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

TransportFacts facts(const std::string& device, bool nccl_built, int ranks_on_node, int gpus_on_node) {
  TransportFacts f;
  f.device = device;
  f.nccl_built = nccl_built;
  f.ranks_on_node = ranks_on_node;
  f.gpus_on_node = gpus_on_node;
  return f;
}

// The kConfig message of choose_transport, or a test failure if it chose something.
std::string refusal(const std::string& requested, const TransportFacts& f) {
  try {
    const std::string chosen = choose_transport(requested, f);
    ADD_FAILURE() << requested << " was accepted as " << chosen;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  return "";
}

TEST(TransportChoice, AutoIsMpiOnTheCpuWhateverTheNode) {
  EXPECT_EQ(choose_transport("auto", facts("cpu", false, 4, 0)), "mpi");
  EXPECT_EQ(choose_transport("auto", facts("cpu", true, 1, 8)), "mpi");
}

TEST(TransportChoice, AutoOnGpusIsNcclOnlyWithAGpuPerRankAndNcclBuilt) {
  EXPECT_EQ(choose_transport("auto", facts("cuda", true, 4, 4)), "nccl");
  EXPECT_EQ(choose_transport("auto", facts("cuda", true, 2, 8)), "nccl");
  EXPECT_EQ(choose_transport("auto", facts("cuda", true, 4, 1)), "staged");   // the lent one-GPU machines
  EXPECT_EQ(choose_transport("auto", facts("cuda", true, 5, 4)), "staged");   // one GPU would be shared
  EXPECT_EQ(choose_transport("auto", facts("cuda", false, 1, 1)), "staged");  // no NCCL in the build
  EXPECT_EQ(choose_transport("auto", facts("cuda", true, 1, 0)), "staged");   // driver reports no GPU
}

TEST(TransportChoice, ExplicitChoicesThatWorkAreKept) {
  EXPECT_EQ(choose_transport("mpi", facts("cpu", false, 4, 0)), "mpi");
  EXPECT_EQ(choose_transport("staged", facts("cpu", false, 4, 0)), "staged");
  EXPECT_EQ(choose_transport("staged", facts("cuda", true, 1, 8)), "staged");
  EXPECT_EQ(choose_transport("nccl", facts("cuda", true, 8, 8)), "nccl");
}

TEST(TransportChoice, RefusalsNameTheKeyTheReasonAndTheAlternative) {
  const std::string mpi_on_gpu = refusal("mpi", facts("cuda", true, 1, 1));
  EXPECT_NE(mpi_on_gpu.find("pipeline.transport: mpi cannot move device memory (device: cuda); use staged, nccl or "
                            "auto"),
            std::string::npos)
      << mpi_on_gpu;
  const std::string nccl_on_cpu = refusal("nccl", facts("cpu", true, 1, 1));
  EXPECT_NE(nccl_on_cpu.find("needs device: cuda (device: cpu); use mpi"), std::string::npos) << nccl_on_cpu;
  const std::string not_built = refusal("nccl", facts("cuda", false, 1, 1));
  EXPECT_NE(not_built.find("is not in this build (build with --config=cuda); use staged"), std::string::npos)
      << not_built;
  const std::string shared = refusal("nccl", facts("cuda", true, 4, 1));
  EXPECT_NE(shared.find("needs one GPU per rank, but 4 ranks on this node share 1 GPU(s) (NCCL refuses two ranks on "
                        "one GPU); use staged"),
            std::string::npos)
      << shared;
  EXPECT_NE(refusal("gloo", facts("cpu", false, 1, 0)).find("unknown transport \"gloo\""), std::string::npos);
}

}  // namespace
}  // namespace sluice::runtime
