#include "core/comm/mpi_context.h"

#include <string>

#include "core/comm/duplicate_comm.h"
#include "core/comm/mpi_transport.h"
#include "core/comm/request_wait.h"
#include "core/common/error.h"

namespace sluice::comm {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ErrorCode::kComm, std::string(what) + " failed: " + std::string(text, len));
}

MpiContext::MpiContext(MPI_Comm world, int stages, int stage_rank, int replica, int blocks, int block) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw Error(ErrorCode::kState, "MPI is not initialized: call MPI_Init before Sluice");
  // Bounded, and returning errors as codes we turn into exceptions instead of MPI aborting the host code.
  world_ = duplicate_communicator(world, "world");
  int rank = 0, size = 1;
  MPI_Comm_rank(world_, &rank);
  MPI_Comm_size(world_, &size);
  if (stages <= 0 || size % stages != 0) {
    throw Error(ErrorCode::kConfig, "world size " + std::to_string(size) + " is not a multiple of " +
                                        std::to_string(stages) + " pipeline stages");
  }
  if (blocks <= 0 || size % (stages * blocks) != 0 || block < 0 || block >= blocks) {
    throw Error(ErrorCode::kConfig, "world size " + std::to_string(size) + " is not a multiple of " +
                                        std::to_string(stages) + " pipeline stages x " + std::to_string(blocks) +
                                        " domain blocks (block " + std::to_string(block) + ")");
  }
  // The one wait MPI cannot bound: there is no non-blocking split, so a rank that never arrives here hangs the
  // others (duplicate_comm.h; docs/DESIGN.md). Every rank reached the bounded duplicate just before.
  // Colors: one per pipeline (replica, block), one per data-parallel group (stage, block), one per domain group
  // (replica, stage); with one block the first two are the replica and the stage, as without a split.
  check_mpi(MPI_Comm_split(world_, replica * blocks + block, stage_rank, &pipeline_comm_), "MPI_Comm_split (pipeline)");
  check_mpi(MPI_Comm_split(world_, stage_rank * blocks + block, replica, &dp_comm_), "MPI_Comm_split (data parallel)");
  MPI_Comm_set_errhandler(pipeline_comm_, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(dp_comm_, MPI_ERRORS_RETURN);
  if (blocks > 1) {
    check_mpi(MPI_Comm_split(world_, replica * stages + stage_rank, block, &domain_comm_), "MPI_Comm_split (domain)");
    MPI_Comm_set_errhandler(domain_comm_, MPI_ERRORS_RETURN);
  }
  pipeline_transport_ = std::make_unique<MpiTransport>(pipeline_comm_);
  pipeline_group_ = std::make_unique<MpiGroup>(pipeline_comm_);
  dp_group_ = std::make_unique<MpiGroup>(dp_comm_);
  world_group_ = std::make_unique<MpiGroup>(world_);
}

MpiContext::~MpiContext() {
  release_communicator(domain_comm_);
  release_communicator(dp_comm_);
  release_communicator(pipeline_comm_);
  release_communicator(world_);
}

}  // namespace sluice::comm
