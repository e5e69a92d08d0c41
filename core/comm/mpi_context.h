// The MPI side of a Sluice job: the world communicator the host code gave us, split into a pipeline
// communicator (the ranks of one data-parallel replica) and a data-parallel communicator (the replicas of
// one pipeline stage); with a domain split (pipeline.domain, docs/DOMAIN.md) also a domain communicator (the
// blocks of one stage of one replica), and the other two per block. Which world ranks those are is the layout's (core/config/rank_order.h); this class only
// splits by the stage and replica it is given.
#pragma once

#include <mpi.h>

#include <memory>

#include "core/comm/collectives.h"
#include "core/comm/transport.h"

namespace sluice::comm {

class MpiContext {
 public:
  // Duplicates `world` (Sluice never communicates on the host code's communicator) and splits it: ranks with
  // equal `replica` form a pipeline (ordered by stage), ranks with equal `stage` a data-parallel group (ordered
  // by replica, the order of the gradient sum's additions). `stages` must divide the world size (checked by
  // config::make_layout before this is built).
  // With `blocks` > 1 (a domain split; `block` this rank's): the pipeline is the ranks of equal (replica, block)
  // ordered by stage, the data-parallel group those of equal (stage, block) ordered by replica, and the domain
  // communicator those of equal (replica, stage) ordered by block (its halos and tile gathers). With one block
  // the splits are exactly those above and there is no domain communicator.
  MpiContext(MPI_Comm world, int stages, int stage, int replica, int blocks = 1, int block = 0);
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  MPI_Comm world() const { return world_; }
  MPI_Comm pipeline_comm() const { return pipeline_comm_; }
  MPI_Comm data_parallel_comm() const { return dp_comm_; }
  // The blocks of this rank's stage and replica, ranked by block; MPI_COMM_NULL without a split.
  MPI_Comm domain_comm() const { return domain_comm_; }
  Transport& pipeline() { return *pipeline_transport_; }
  Group& pipeline_group() { return *pipeline_group_; }
  Group& data_parallel_group() { return *dp_group_; }
  Group& world_group() { return *world_group_; }

 private:
  MPI_Comm world_ = MPI_COMM_NULL;
  MPI_Comm pipeline_comm_ = MPI_COMM_NULL;
  MPI_Comm dp_comm_ = MPI_COMM_NULL;
  MPI_Comm domain_comm_ = MPI_COMM_NULL;
  std::unique_ptr<Transport> pipeline_transport_;
  std::unique_ptr<Group> pipeline_group_;
  std::unique_ptr<Group> dp_group_;
  std::unique_ptr<Group> world_group_;
};

// Throws sluice::Error(kComm) naming `what` when an MPI call fails (communicators use MPI_ERRORS_RETURN).
void check_mpi(int rc, const char* what);

}  // namespace sluice::comm
