#include "core/runtime/transport_choice.h"

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

[[noreturn]] void refuse(const std::string& requested, const std::string& why, const std::string& instead) {
  throw Error(ErrorCode::kConfig, "pipeline.transport: " + requested + " " + why + "; use " + instead);
}

bool each_rank_has_a_gpu(const TransportFacts& facts) {
  return facts.gpus_on_node > 0 && facts.ranks_on_node <= facts.gpus_on_node;
}

std::string sharing(const TransportFacts& facts) {
  return std::to_string(facts.ranks_on_node) + " ranks on this node share " + std::to_string(facts.gpus_on_node) +
         " GPU(s)";
}

}  // namespace

std::string choose_transport(const std::string& requested, const TransportFacts& facts) {
  const bool on_gpu = facts.device != "cpu";
  if (requested == "auto") {
    if (!on_gpu) return "mpi";
    return facts.nccl_built && each_rank_has_a_gpu(facts) ? "nccl" : "staged";
  }
  if (requested == "mpi") {
    if (on_gpu) refuse(requested, "cannot move device memory (device: " + facts.device + ")", "staged, nccl or auto");
    return "mpi";
  }
  if (requested == "staged") return "staged";
  if (requested == "nccl") {
    if (!on_gpu) refuse(requested, "moves device memory and needs device: cuda (device: " + facts.device + ")", "mpi");
    if (!facts.nccl_built) refuse(requested, "is not in this build (build with --config=cuda)", "staged");
    if (!each_rank_has_a_gpu(facts)) {
      refuse(requested, "needs one GPU per rank, but " + sharing(facts) + " (NCCL refuses two ranks on one GPU)",
             "staged");
    }
    return "nccl";
  }
  throw Error(ErrorCode::kConfig,
              "pipeline.transport: unknown transport \"" + requested + "\"; expected auto, mpi, staged or nccl");
}

}  // namespace sluice::runtime
