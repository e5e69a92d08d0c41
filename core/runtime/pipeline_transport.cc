#include "core/runtime/pipeline_transport.h"

#include <exception>

#include "core/comm/staged_transport.h"
#include "core/comm/agreement.h"
#include "core/runtime/nccl_support.h"
#include "core/runtime/node_ranks.h"
#include "core/runtime/transport_choice.h"

namespace sluice::runtime {

namespace {

// The transports in use across the world, for the layout print: "staged", or "mixed: mpi, staged". Collective.
std::string summarize(comm::Group& world, config::TransportKind mine) {
  using config::TransportKind;
  std::string used;
  int kinds = 0;
  for (TransportKind kind : {TransportKind::kMpi, TransportKind::kStaged, TransportKind::kNccl}) {
    if (!world.any(mine == kind)) continue;
    used += (used.empty() ? "" : ", ") + std::string(config::transport_kind_name(kind));
    ++kinds;
  }
  return kinds == 1 ? used : "mixed: " + used;
}

}  // namespace

// Mixed pipelines (some stages cpu, some cuda) put an mpi rank next to a staged rank. They interoperate
// because StagedTransport (core/comm/staged_transport.cc) sends and receives through the very same host
// transport the mpi ranks use, mpi.pipeline() (an MpiTransport on the pipeline communicator): its isend/irecv
// copy to or from a host buffer and pass the same count, peer and tag on, so each message on the wire is the
// MPI_Isend/MPI_Irecv of `count` MPI_FLOATs with the caller's tag (core/comm/mpi_transport.cc) that an mpi rank
// posts. Only where the floats live on each side differs. NCCL messages are not MPI messages: nccl is all or
// nothing, hence "auto" falls back to staged everywhere below.
PipelineTransport make_pipeline_transport(config::TransportKind requested,
                                          const std::vector<config::DeviceKind>& stage_devices, int stage,
                                          comm::MpiContext& mpi, kernels::Backend& backend) {
  const NcclSupport* nccl = nccl_support();
  TransportFacts facts;
  facts.stage_devices = stage_devices;
  facts.stage = stage;
  facts.nccl_built = nccl != nullptr;
  facts.ranks_on_node = ranks_on_this_node(mpi.world());
  facts.gpus_on_node = nccl != nullptr ? nccl->gpus_on_node() : 0;

  PipelineTransport result;
  std::exception_ptr error;
  try {
    result.kind = choose_transport(requested, facts);
  } catch (...) {
    error = std::current_exception();
  }
  comm::agree_or_throw(mpi.world(), "choosing pipeline.transport", error);
  // Nodes may differ (one with enough GPUs, one without): NCCL is all or nothing, so auto falls back to staged
  // everywhere if any rank could not use it.
  using config::TransportKind;
  const bool some_rank_without_nccl = mpi.world_group().any(result.kind != TransportKind::kNccl);  // collective
  if (result.kind == TransportKind::kNccl && some_rank_without_nccl) result.kind = TransportKind::kStaged;

  try {
    if (result.kind == TransportKind::kStaged) {
      result.owned = std::make_unique<comm::StagedTransport>(mpi.pipeline(), backend.host_staging());
    } else if (result.kind == TransportKind::kNccl) {
      result.owned = nccl->create(mpi.pipeline_comm(), backend);  // collective over the pipeline
    }
  } catch (...) {
    error = std::current_exception();
  }
  comm::agree_or_throw(mpi.world(), "creating the pipeline transport", error);
  result.transport = result.owned ? result.owned.get() : &mpi.pipeline();
  result.summary = summarize(mpi.world_group(), result.kind);
  return result;
}

}  // namespace sluice::runtime
