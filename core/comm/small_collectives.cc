#include "core/comm/small_collectives.h"

#include <algorithm>
#include <memory>

#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"

namespace sluice::comm {

// Each buffer MPI writes into lives on the heap: after a timeout it is leaked, not freed (wait_for_keeping).

namespace {

// Every rank's `mine` (the same count on every rank) on every rank, bounded.
template <typename T>
std::vector<T> all_gather(MPI_Comm comm, const std::vector<T>& mine, MPI_Datatype type, const std::string& what) {
  int size = 1;
  check_mpi(MPI_Comm_size(comm, &size), ("MPI_Comm_size (" + what + ")").c_str());
  const int count = static_cast<int>(mine.size());
  struct Buffers {
    std::vector<T> sent, all;
  };
  auto buffers = std::make_unique<Buffers>(Buffers{mine, std::vector<T>(mine.size() * static_cast<size_t>(size))});
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(buffers->sent.data(), count, type, buffers->all.data(), count, type, comm, &request),
            ("MPI_Iallgather (" + what + ")").c_str());
  wait_for_keeping(request, buffers, what + " from " + peers_text(comm));
  return buffers->all;
}

}  // namespace

std::vector<int> all_gather_ints(MPI_Comm comm, const std::vector<int>& mine, const std::string& what) {
  return all_gather(comm, mine, MPI_INT, what);
}

std::vector<int64_t> all_gather_int64s(MPI_Comm comm, const std::vector<int64_t>& mine, const std::string& what) {
  return all_gather(comm, mine, MPI_INT64_T, what);
}

namespace {

// In-place all-reduce of `count` elements of `type` with `op`, bounded.
template <typename T>
void all_reduce(MPI_Comm comm, T* values, int count, MPI_Datatype type, MPI_Op op, const std::string& what) {
  auto buffer = std::make_unique<std::vector<T>>(values, values + count);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, buffer->data(), count, type, op, comm, &request),
            ("MPI_Iallreduce (" + what + ")").c_str());
  wait_for_keeping(request, buffer, what + " from " + peers_text(comm));
  std::copy(buffer->begin(), buffer->end(), values);
}

}  // namespace

int all_min(MPI_Comm comm, int value, const std::string& what) {
  all_reduce(comm, &value, 1, MPI_INT, MPI_MIN, what);
  return value;
}

void all_sum(MPI_Comm comm, double* values, int count, const std::string& what) {
  all_reduce(comm, values, count, MPI_DOUBLE, MPI_SUM, what);
}

void all_bitwise_or(MPI_Comm comm, unsigned char* bytes, int count, const std::string& what) {
  all_reduce(comm, bytes, count, MPI_BYTE, MPI_BOR, what);
}

}  // namespace sluice::comm
