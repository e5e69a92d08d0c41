// Builds the transport a rank's executor sends activations over, from config pipeline.transport: the rules
// are in transport_choice.h; this file gathers each rank's facts (device, ranks and GPUs on its node), makes
// all ranks agree, and constructs the transport (MPI, staged through the backend's host staging, or NCCL).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/comm/mpi_context.h"
#include "core/comm/transport.h"
#include "core/config/device_kind.h"
#include "core/config/transport_kind.h"
#include "kernels/backend.h"

namespace sluice::runtime {

struct PipelineTransport {
  config::TransportKind kind = config::TransportKind::kMpi;  // this rank's: kMpi | kStaged | kNccl
  std::string summary;                     // the same on every rank: the one name, or "mixed: mpi, staged"
  std::unique_ptr<comm::Transport> owned;  // staged/nccl; null for mpi (the MpiContext owns that one)
  comm::Transport* transport = nullptr;    // what the executors use
};

// Collective over mpi.world(). `stage_devices` holds the device of every pipeline stage and `stage` is this
// rank's. Every rank returns a choice or every rank throws (a refusal on any rank is reported on all:
// agreement.h). "auto" picks nccl only if every rank can use it; otherwise staged on cuda stages and mpi on cpu
// stages, so with mixed devices ranks differ (they interoperate: see the .cc). The result must not outlive
// `mpi` or `backend`.
PipelineTransport make_pipeline_transport(config::TransportKind requested,
                                          const std::vector<config::DeviceKind>& stage_devices, int stage,
                                          comm::MpiContext& mpi, kernels::Backend& backend);

}  // namespace sluice::runtime
