#include "checkpoint/byte_exchange.h"

#include <climits>

#include "core/comm/request_wait.h"
#include "core/common/error.h"

namespace sluice::checkpoint {

std::vector<std::string> allgather_bytes(MPI_Comm comm, const std::string& mine) {
  int size = 1;
  int my_rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &my_rank);
  // Sizes travel as 64-bit so an oversized manifest is detected by every rank alike, not just by its owner.
  const long long my_count = static_cast<long long>(mine.size());
  std::vector<long long> wide_counts(static_cast<size_t>(size));
  // Non-blocking collectives and Sluice's bounded wait: a stopped peer is a TIMEOUT, not a busy hang.
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallgather(&my_count, 1, MPI_LONG_LONG, wide_counts.data(), 1, MPI_LONG_LONG, comm, &request);
  comm::wait_for(request, "checkpoint manifest sizes from " + comm::peers_text(comm));
  std::vector<int> counts(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    if (wide_counts[static_cast<size_t>(r)] > INT_MAX) {
      throw Error(ErrorCode::kInvalidArgument,
                  "checkpoint manifest of rank " + std::to_string(r) + " exceeds 2 GiB");
    }
    counts[static_cast<size_t>(r)] = static_cast<int>(wide_counts[static_cast<size_t>(r)]);
  }

  std::vector<int> offsets(static_cast<size_t>(size), 0);
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<size_t>(r)] = static_cast<int>(total);
    total += counts[static_cast<size_t>(r)];
  }
  if (total > INT_MAX) throw Error(ErrorCode::kInvalidArgument, "checkpoint manifests of all ranks exceed 2 GiB");
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Iallgatherv(mine.data(), counts[static_cast<size_t>(my_rank)], MPI_CHAR, all.data(), counts.data(),
                  offsets.data(), MPI_CHAR, comm, &request);
  comm::wait_for(request, "checkpoint manifests from " + comm::peers_text(comm));

  std::vector<std::string> per_rank;
  per_rank.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    per_rank.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                  static_cast<size_t>(counts[static_cast<size_t>(r)])));
  }
  return per_rank;
}

std::string broadcast_bytes(MPI_Comm comm, const std::string& bytes_at_root, int root) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  unsigned long long length = rank == root ? bytes_at_root.size() : 0;
  MPI_Request request = MPI_REQUEST_NULL;
  const std::string from = "checkpoint metadata broadcast from " + comm::world_ranks_text(comm, {root});
  MPI_Ibcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm, &request);
  comm::wait_for(request, from);
  if (length > static_cast<unsigned long long>(INT_MAX)) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint metadata broadcast exceeds 2 GiB");
  }
  std::string bytes = rank == root ? bytes_at_root : std::string(static_cast<size_t>(length), '\0');
  MPI_Ibcast(bytes.data(), static_cast<int>(length), MPI_CHAR, root, comm, &request);
  comm::wait_for(request, from);
  return bytes;
}

}  // namespace sluice::checkpoint
