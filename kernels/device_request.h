// What a rank asks the backend registry for: a device by its config name, and which unit of that device on the
// node it should drive. The caller says where the rank stands (the trainer learns it from MPI); kernels/ knows
// nothing of MPI or of the launcher.
#pragma once

#include <string>

namespace sluice::kernels {

struct DeviceRequest {
  std::string device;  // the config's `device:` name: "cpu", "cuda", ...
  // This rank's place (0, 1, ...) among the ranks of its node that drive this kind of device. A backend with
  // several units per node (GPUs) drives unit device_for_local_rank(local_rank, units); the CPU ignores it.
  int local_rank = 0;
};

// The GPU a rank drives: local_rank % gpus_on_node, so T ranks on a node with G GPUs share them round-robin;
// -1 when the node has no GPU (CPU run). Throws sluice::Error(kInvalidArgument) for a negative argument.
int device_for_local_rank(int local_rank, int gpus_on_node);

}  // namespace sluice::kernels
