// Collectives of a few numbers on any communicator, for set-up and measurement outside the training step (the
// node map, the cores of a node's ranks, the profile's busy times). Each is a non-blocking MPI call finished by
// Sluice's bounded wait (request_wait.h), so none can hang or spin a core, and an MPI error or a timeout throws
// an Error naming `what` and the peers waited for. The training step's sums go through Group (collectives.h).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::comm {

// Every rank's `mine` (the same count on every rank) on every rank: out[r * mine.size() + i].
std::vector<int> all_gather_ints(MPI_Comm comm, const std::vector<int>& mine, const std::string& what);
// The same for 64-bit integers (a field's extents and offsets).
std::vector<int64_t> all_gather_int64s(MPI_Comm comm, const std::vector<int64_t>& mine, const std::string& what);

// The smallest `value` over the ranks of `comm`.
int all_min(MPI_Comm comm, int value, const std::string& what);

// The sum of `count` doubles over the ranks of `comm`, in place, in MPI's order of additions (unspecified): for
// measurements only; a sum that results depend on is an ordered sum (Group, collectives.h).
void all_sum(MPI_Comm comm, double* values, int count, const std::string& what);

// Bitwise OR of `count` bytes over the ranks of `comm`, in place.
void all_bitwise_or(MPI_Comm comm, unsigned char* bytes, int count, const std::string& what);

}  // namespace sluice::comm
