#include "checkpoint/collective_agreement.h"

#include <string>
#include <vector>

namespace sluice::checkpoint {

void agree_or_throw(MPI_Comm comm, const std::optional<Error>& local_failure) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int my_vote = local_failure ? rank : size;
  int first_failing = size;
  MPI_Allreduce(&my_vote, &first_failing, 1, MPI_INT, MPI_MIN, comm);
  if (first_failing == size) return;

  // The reporter's code and message travel to everyone so each rank's exception says the same thing.
  int header[2] = {0, 0};
  std::string message;
  if (rank == first_failing) {
    header[0] = static_cast<int>(local_failure->code());
    message = local_failure->what();
    header[1] = static_cast<int>(message.size());
  }
  MPI_Bcast(header, 2, MPI_INT, first_failing, comm);
  message.resize(static_cast<size_t>(header[1]));
  MPI_Bcast(message.data(), header[1], MPI_CHAR, first_failing, comm);
  if (rank != first_failing && size > 1) message += " (reported by rank " + std::to_string(first_failing) + ")";
  throw Error(static_cast<ErrorCode>(header[0]), message);
}

}  // namespace sluice::checkpoint
