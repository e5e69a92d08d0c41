// A private duplicate of a communicator for the duration of a scope: Sluice never communicates on the host's
// communicator, and a duplicate's messages can never match another message on the original.
#pragma once

#include <mpi.h>

#include <string>

#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"

namespace sluice::comm {

class DuplicateComm {
 public:
  // Collective over `comm`; `what` names the use in an error ("MPI_Comm_dup (what) failed: ...").
  DuplicateComm(MPI_Comm comm, const char* what) {
    check_mpi(MPI_Comm_dup(comm, &comm_), ("MPI_Comm_dup (" + std::string(what) + ")").c_str());
  }
  ~DuplicateComm() { release_communicator(comm_); }
  DuplicateComm(const DuplicateComm&) = delete;
  DuplicateComm& operator=(const DuplicateComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace sluice::comm
