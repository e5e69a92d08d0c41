#include "core/comm/duplicate_comm.h"

#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"

namespace sluice::comm {

MPI_Comm duplicate_communicator(MPI_Comm comm, const std::string& what) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Comm_idup(comm, &dup, &request), ("MPI_Comm_idup (" + what + ")").c_str());
  // After a timeout the request stays pending (request_wait.h) and `dup` is never used.
  wait_for(request, "duplicating the communicator (" + what + ") with " + peers_text(comm));
  // Sluice's waits turn MPI errors into Errors that go through the agreement, instead of MPI aborting the host.
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  return dup;
}

}  // namespace sluice::comm
