// Moving serialized metadata (manifests, train values, attributes) between ranks as plain byte strings.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace sluice::checkpoint {

// Collective: every rank receives every rank's bytes, indexed by rank.
std::vector<std::string> allgather_bytes(MPI_Comm comm, const std::string& mine);

// Collective: every rank receives root's bytes.
std::string broadcast_bytes(MPI_Comm comm, const std::string& bytes_at_root, int root);

}  // namespace sluice::checkpoint
