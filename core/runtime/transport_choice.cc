#include "core/runtime/transport_choice.h"

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

using config::DeviceKind;
using config::TransportKind;

[[noreturn]] void refuse(TransportKind requested, const std::string& why, const std::string& instead) {
  throw Error(ErrorCode::kConfig, std::string("pipeline.transport: ") + config::transport_kind_name(requested) + " " +
                                      why + "; use " + instead);
}

bool each_rank_has_a_gpu(const TransportFacts& facts) {
  return facts.gpus_on_node > 0 && facts.ranks_on_node <= facts.gpus_on_node;
}

std::string sharing(const TransportFacts& facts) {
  return std::to_string(facts.ranks_on_node) + " ranks on this node share " + std::to_string(facts.gpus_on_node) +
         " GPU(s)";
}

// The stages on `device`: {} when none.
std::vector<int> stages_on(const TransportFacts& facts, DeviceKind device) {
  std::vector<int> stages;
  for (std::size_t s = 0; s < facts.stage_devices.size(); ++s) {
    if (facts.stage_devices[s] == device) stages.push_back(static_cast<int>(s));
  }
  return stages;
}

// "device: cuda" when every stage is on `device`, else "device cuda on stages 1, 2".
std::string where(const TransportFacts& facts, DeviceKind device, const std::vector<int>& stages) {
  const std::string name = config::device_kind_name(device);
  if (stages.size() == facts.stage_devices.size()) return "device: " + name;
  std::string listed;
  for (int s : stages) listed += (listed.empty() ? "" : ", ") + std::to_string(s);
  return "device " + name + " on stage" + (stages.size() == 1 ? " " : "s ") + listed;
}

DeviceKind my_device(const TransportFacts& facts) {
  if (facts.stage < 0 || static_cast<std::size_t>(facts.stage) >= facts.stage_devices.size()) {
    throw Error(ErrorCode::kInternal, "choose_transport: stage " + std::to_string(facts.stage) + " outside the " +
                                          std::to_string(facts.stage_devices.size()) + " stage devices");
  }
  return facts.stage_devices[static_cast<std::size_t>(facts.stage)];
}

}  // namespace

TransportKind choose_transport(TransportKind requested, const TransportFacts& facts) {
  const bool on_gpu = my_device(facts) != DeviceKind::kCpu;
  const std::vector<int> cpu_stages = stages_on(facts, DeviceKind::kCpu);
  const std::vector<int> gpu_stages = stages_on(facts, DeviceKind::kCuda);
  const bool mixed = !cpu_stages.empty() && !gpu_stages.empty();
  switch (requested) {
    case TransportKind::kAuto:
      if (!on_gpu) return TransportKind::kMpi;
      return !mixed && facts.nccl_built && each_rank_has_a_gpu(facts) ? TransportKind::kNccl : TransportKind::kStaged;
    case TransportKind::kMpi:
      if (!gpu_stages.empty()) {
        refuse(requested, "cannot move device memory (" + where(facts, DeviceKind::kCuda, gpu_stages) + ")",
               mixed ? "staged or auto" : "staged, nccl or auto");
      }
      return TransportKind::kMpi;
    case TransportKind::kStaged:
      return TransportKind::kStaged;
    case TransportKind::kNccl:
      break;
  }
  if (!cpu_stages.empty()) {
    refuse(requested,
           "moves device memory and needs device: cuda on every stage (" +
               where(facts, DeviceKind::kCpu, cpu_stages) + ")",
           mixed ? "auto (mpi on cpu stages, staged on cuda stages) or staged" : "mpi");
  }
  if (!facts.nccl_built) refuse(requested, "is not in this build (build with --config=cuda)", "staged");
  if (!each_rank_has_a_gpu(facts)) {
    refuse(requested, "needs one GPU per rank, but " + sharing(facts) + " (NCCL refuses two ranks on one GPU)",
           "staged");
  }
  return TransportKind::kNccl;
}

}  // namespace sluice::runtime
