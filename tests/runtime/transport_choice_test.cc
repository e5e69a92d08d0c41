// The rules of pipeline.transport (core/runtime/transport_choice.h), one fact at a time, for uniform and
// mixed (some stages cpu, some cuda) pipelines.
#include "core/runtime/transport_choice.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

TransportFacts facts(const std::vector<std::string>& stage_devices, int stage, bool nccl_built, int ranks_on_node,
                     int gpus_on_node) {
  TransportFacts f;
  for (const std::string& device : stage_devices) f.stage_devices.push_back(*config::device_kinds().find(device));
  f.stage = stage;
  f.nccl_built = nccl_built;
  f.ranks_on_node = ranks_on_node;
  f.gpus_on_node = gpus_on_node;
  return f;
}

// Every stage on `device`; this rank is stage 0 of 4.
TransportFacts facts(const std::string& device, bool nccl_built, int ranks_on_node, int gpus_on_node) {
  return facts({device, device, device, device}, 0, nccl_built, ranks_on_node, gpus_on_node);
}

const std::vector<std::string> kMixed = {"cuda", "cuda", "cpu", "cpu"};

// choose_transport with the request and the choice spelled as in the config.
std::string chosen(const std::string& requested, const TransportFacts& f) {
  const config::TransportKind kind = config::transport_kinds().parse(requested, "pipeline.transport");
  return config::transport_kind_name(choose_transport(kind, f));
}

// The kConfig message of choose_transport, or a test failure if it chose something.
std::string refusal(const std::string& requested, const TransportFacts& f) {
  try {
    const std::string choice = chosen(requested, f);
    ADD_FAILURE() << requested << " was accepted as " << choice;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  return "";
}

TEST(TransportChoice, AutoIsMpiOnTheCpuWhateverTheNode) {
  EXPECT_EQ(chosen("auto", facts("cpu", false, 4, 0)), "mpi");
  EXPECT_EQ(chosen("auto", facts("cpu", true, 1, 8)), "mpi");
}

TEST(TransportChoice, AutoOnGpusIsNcclOnlyWithAGpuPerRankAndNcclBuilt) {
  EXPECT_EQ(chosen("auto", facts("cuda", true, 4, 4)), "nccl");
  EXPECT_EQ(chosen("auto", facts("cuda", true, 2, 8)), "nccl");
  EXPECT_EQ(chosen("auto", facts("cuda", true, 4, 1)), "staged");   // the lent one-GPU machines
  EXPECT_EQ(chosen("auto", facts("cuda", true, 5, 4)), "staged");   // one GPU would be shared
  EXPECT_EQ(chosen("auto", facts("cuda", false, 1, 1)), "staged");  // no NCCL in the build
  EXPECT_EQ(chosen("auto", facts("cuda", true, 1, 0)), "staged");   // driver reports no GPU
}

TEST(TransportChoice, ExplicitChoicesThatWorkAreKept) {
  EXPECT_EQ(chosen("mpi", facts("cpu", false, 4, 0)), "mpi");
  EXPECT_EQ(chosen("staged", facts("cpu", false, 4, 0)), "staged");
  EXPECT_EQ(chosen("staged", facts("cuda", true, 1, 8)), "staged");
  EXPECT_EQ(chosen("nccl", facts("cuda", true, 8, 8)), "nccl");
}

TEST(TransportChoice, RefusalsNameTheKeyTheReasonAndTheAlternative) {
  const std::string mpi_on_gpu = refusal("mpi", facts("cuda", true, 1, 1));
  EXPECT_NE(mpi_on_gpu.find("pipeline.transport: mpi cannot move device memory (device: cuda); use staged, nccl or "
                            "auto"),
            std::string::npos)
      << mpi_on_gpu;
  const std::string nccl_on_cpu = refusal("nccl", facts("cpu", true, 1, 1));
  EXPECT_NE(nccl_on_cpu.find("needs device: cuda on every stage (device: cpu); use mpi"), std::string::npos)
      << nccl_on_cpu;
  const std::string not_built = refusal("nccl", facts("cuda", false, 1, 1));
  EXPECT_NE(not_built.find("is not in this build (build with --config=cuda); use staged"), std::string::npos)
      << not_built;
  const std::string shared = refusal("nccl", facts("cuda", true, 4, 1));
  EXPECT_NE(shared.find("needs one GPU per rank, but 4 ranks on this node share 1 GPU(s) (NCCL refuses two ranks on "
                        "one GPU); use staged"),
            std::string::npos)
      << shared;
  // An unknown name is the name table's refusal now (the config parser's own lists the names too).
  EXPECT_NE(refusal("gloo", facts("cpu", false, 1, 0))
                .find("pipeline.transport: unknown value \"gloo\"; expected auto, mpi, staged or nccl"),
            std::string::npos);
}

// Mixed pipelines: every requested value on a cpu stage and on a cuda stage, on a node where NCCL would
// otherwise be chosen (built, a GPU per rank), so nothing below falls back for lack of GPUs.
TEST(TransportChoiceMixed, AutoIsMpiOnCpuStagesAndStagedOnCudaStagesNeverNccl) {
  for (int stage = 0; stage < 4; ++stage) {
    const std::string expected = kMixed[stage] == "cpu" ? "mpi" : "staged";
    EXPECT_EQ(chosen("auto", facts(kMixed, stage, true, 4, 4)), expected) << "stage " << stage;
    EXPECT_EQ(chosen("auto", facts(kMixed, stage, false, 4, 0)), expected) << "stage " << stage;
  }
  // A single cpu stage anywhere is enough to keep NCCL out.
  EXPECT_EQ(chosen("auto", facts({"cuda", "cuda", "cuda", "cpu"}, 0, true, 4, 4)), "staged");
  EXPECT_EQ(chosen("auto", facts({"cuda", "cuda", "cuda", "cpu"}, 3, true, 4, 4)), "mpi");
}

TEST(TransportChoiceMixed, StagedIsStagedOnEveryStage) {
  for (int stage = 0; stage < 4; ++stage) {
    EXPECT_EQ(chosen("staged", facts(kMixed, stage, true, 4, 4)), "staged") << "stage " << stage;
  }
}

TEST(TransportChoiceMixed, MpiIsRefusedOnEveryStageNamingTheCudaStages) {
  for (int stage = 0; stage < 4; ++stage) {  // the cpu stages too: every rank reports the same refusal
    const std::string message = refusal("mpi", facts(kMixed, stage, true, 4, 4));
    EXPECT_NE(message.find("pipeline.transport: mpi cannot move device memory (device cuda on stages 0, 1); use "
                           "staged or auto"),
              std::string::npos)
        << "stage " << stage << ": " << message;
  }
  const std::string one = refusal("mpi", facts({"cpu", "cpu", "cuda", "cpu"}, 0, false, 1, 0));
  EXPECT_NE(one.find("(device cuda on stage 2)"), std::string::npos) << one;
}

TEST(TransportChoiceMixed, NcclIsRefusedOnEveryStageNamingTheCpuStages) {
  for (int stage = 0; stage < 4; ++stage) {
    const std::string message = refusal("nccl", facts(kMixed, stage, true, 4, 4));
    EXPECT_NE(message.find("pipeline.transport: nccl moves device memory and needs device: cuda on every stage "
                           "(device cpu on stages 2, 3); use auto (mpi on cpu stages, staged on cuda stages) or "
                           "staged"),
              std::string::npos)
        << "stage " << stage << ": " << message;
  }
}

TEST(TransportChoice, AStageOutsideTheDeviceListIsAnInternalError) {
  try {
    chosen("auto", facts(kMixed, 4, true, 4, 4));
    ADD_FAILURE() << "stage 4 of 4 was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInternal) << error.what();
  }
}

}  // namespace
}  // namespace sluice::runtime
