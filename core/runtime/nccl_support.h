// The NCCL pipeline transport and data-parallel gradient sum, as the trainer sees them: present only in builds that link
// //core/runtime:nccl_registration (--config=cuda), which fills this in at load time. The trainer asks for it
// by name and never includes a CUDA or NCCL header, so the GPU path adds files, not branches.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>

#include "core/comm/transport.h"
#include "core/runtime/gradient_reducer.h"
#include "kernels/backend.h"

namespace sluice::runtime {

struct NcclSupport {
  // GPUs this process can see on its node (0 when none or when the driver is missing).
  std::function<int()> gpus_on_node;
  // Collective over `pipeline_comm`: one NCCL communicator on the backend's GPU and a transport over it on the
  // backend's communication stream (CudaBackend::communication_stream()). The transport owns the communicator.
  std::function<std::unique_ptr<comm::Transport>(MPI_Comm pipeline_comm, kernels::Backend& backend)> create;
  // Collective over `data_parallel_comm`: the data-parallel gradient sum as ncclAllReduce on the backend's GPU,
  // on the same communication stream as the transport, ordered against compute (gradient_sum: nccl).
  std::function<std::unique_ptr<GradientReducer>(MPI_Comm data_parallel_comm, kernels::Backend& backend)>
      create_gradient_reducer;
};

// Called once by the registration library's static initialiser; returns true so it can initialise a static.
bool register_nccl_support(NcclSupport support);

// Null unless NCCL is linked into this build.
const NcclSupport* nccl_support();

}  // namespace sluice::runtime
