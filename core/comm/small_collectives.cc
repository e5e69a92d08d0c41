#include "core/comm/small_collectives.h"

#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"

namespace sluice::comm {

std::vector<int> all_gather_ints(MPI_Comm comm, const std::vector<int>& mine, const std::string& what) {
  int size = 1;
  check_mpi(MPI_Comm_size(comm, &size), ("MPI_Comm_size (" + what + ")").c_str());
  const int count = static_cast<int>(mine.size());
  std::vector<int> all(mine.size() * static_cast<size_t>(size));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(mine.data(), count, MPI_INT, all.data(), count, MPI_INT, comm, &request),
            ("MPI_Iallgather (" + what + ")").c_str());
  wait_for(request, what + " from " + peers_text(comm));
  return all;
}

int all_min(MPI_Comm comm, int value, const std::string& what) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MIN, comm, &request),
            ("MPI_Iallreduce (" + what + ")").c_str());
  wait_for(request, what + " from " + peers_text(comm));
  return value;
}

void all_sum(MPI_Comm comm, double* values, int count, const std::string& what) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm, &request),
            ("MPI_Iallreduce (" + what + ")").c_str());
  wait_for(request, what + " from " + peers_text(comm));
}

void all_bitwise_or(MPI_Comm comm, unsigned char* bytes, int count, const std::string& what) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, bytes, count, MPI_BYTE, MPI_BOR, comm, &request),
            ("MPI_Iallreduce (" + what + ")").c_str());
  wait_for(request, what + " from " + peers_text(comm));
}

}  // namespace sluice::comm
