#include "core/runtime/pipeline_transport.h"

#include <exception>

#include "core/comm/staged_transport.h"
#include "core/runtime/agreement.h"
#include "core/runtime/nccl_support.h"
#include "core/runtime/transport_choice.h"

namespace sluice::runtime {

int ranks_on_this_node(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  comm::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                  "MPI_Comm_split_type (ranks per node)");
  int size = 1;
  const int rc = MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  comm::check_mpi(rc, "MPI_Comm_size (ranks per node)");
  return size;
}

PipelineTransport make_pipeline_transport(const std::string& requested, const std::string& device,
                                          comm::MpiContext& mpi, kernels::Backend& backend) {
  const NcclSupport* nccl = nccl_support();
  TransportFacts facts;
  facts.device = device;
  facts.nccl_built = nccl != nullptr;
  facts.ranks_on_node = ranks_on_this_node(mpi.world());
  facts.gpus_on_node = nccl != nullptr ? nccl->gpus_on_node() : 0;

  PipelineTransport result;
  std::exception_ptr error;
  try {
    result.name = choose_transport(requested, facts);
  } catch (...) {
    error = std::current_exception();
  }
  agree_or_throw(mpi.world_group(), error, "choosing pipeline.transport");
  // Nodes may differ (one with enough GPUs, one without): NCCL is all or nothing, so auto falls back to staged
  // everywhere if any rank could not use it.
  const bool some_rank_without_nccl = mpi.world_group().any(result.name != "nccl");  // collective: every rank
  if (result.name == "nccl" && some_rank_without_nccl) result.name = "staged";

  try {
    if (result.name == "staged") {
      result.owned = std::make_unique<comm::StagedTransport>(mpi.pipeline(), backend.host_staging());
    } else if (result.name == "nccl") {
      result.owned = nccl->create(mpi.pipeline_comm(), backend);  // collective over the pipeline
    }
  } catch (...) {
    error = std::current_exception();
  }
  agree_or_throw(mpi.world_group(), error, "creating the " + result.name + " pipeline transport");
  result.transport = result.owned ? result.owned.get() : &mpi.pipeline();
  return result;
}

}  // namespace sluice::runtime
