// A private duplicate of a communicator: Sluice never communicates on the host's communicator, and a
// duplicate's messages can never match another message on the original.
//
// The duplicate is made with MPI_Comm_idup under Sluice's bounded wait (request_wait.h), so a rank that never
// joins is named in a TIMEOUT instead of hanging the others. Communicators made by splitting (MPI_Comm_split,
// MPI_Comm_split_type: the pipeline and data-parallel groups, a node's ranks) cannot be bounded: MPI has no
// non-blocking split, so those are the one wait of Sluice's that MPI leaves unbounded (docs/DESIGN.md).
#pragma once

#include <mpi.h>

#include <string>

#include "core/comm/request_wait.h"

namespace sluice::comm {

// Collective over `comm`: a duplicate of it that returns MPI errors (MPI_ERRORS_RETURN), made within
// comm.timeout. `what` names the use in an error ("MPI_Comm_idup (what) failed: ...", or a TIMEOUT naming the
// peers). Free it with release_communicator.
MPI_Comm duplicate_communicator(MPI_Comm comm, const std::string& what);

// duplicate_communicator for the duration of a scope.
class DuplicateComm {
 public:
  DuplicateComm(MPI_Comm comm, const std::string& what) : comm_(duplicate_communicator(comm, what)) {}
  ~DuplicateComm() { release_communicator(comm_); }
  DuplicateComm(const DuplicateComm&) = delete;
  DuplicateComm& operator=(const DuplicateComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace sluice::comm
