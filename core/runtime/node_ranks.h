// Who shares this rank's node, from MPI itself (MPI_COMM_TYPE_SHARED) rather than from a launcher's environment
// variables: it is what GPU placement and the transport choice need to know.
#pragma once

#include <mpi.h>

#include <vector>

namespace sluice::runtime {

// Collective over `comm`: how many of its ranks share this rank's node.
int ranks_on_this_node(MPI_Comm comm);

// Collective over `comm`: how many cores the ranks of this rank's node may run on together, the union of their CPU
// affinity masks. Two ranks bound to a core each (mpirun --bind-to core, Slurm task binding) have 2 between them
// although each sees 1; a rank whose mask cannot be read counts as able to run on every core (at least 1).
int cores_of_node_ranks(MPI_Comm comm);

// Collective over `comm`: this rank's index among the ranks of its node for which `member` is true, numbered in
// `comm` rank order; -1 when `member` is false. With member = "my stage runs on cuda" it is the rank's place among
// the node's GPU-driving ranks, so cpu ranks of a mixed pipeline take no GPU.
int rank_among_node_peers(MPI_Comm comm, bool member);

// Collective over `comm`: the node of every rank of `comm` (index r is comm rank r), nodes numbered 0, 1, ... in
// the order their first rank appears. From MPI's shared-memory split, unless every rank has SLUICE_NODE_ID set
// (a non-negative integer): then from that, which lets a test make one machine look like several nodes and a
// site describe a network that shared memory does not show. Throws Error(kInvalidArgument) on every rank when one
// rank's SLUICE_NODE_ID is malformed, naming that rank.
std::vector<int> node_of_each_rank(MPI_Comm comm);

}  // namespace sluice::runtime
