#include "core/runtime/node_ranks.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "core/comm/mpi_context.h"
#include "core/comm/small_collectives.h"
#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// This node's ranks of `comm`, in `comm` rank order; freed on scope exit. Made by a split, the one wait MPI cannot
// bound (core/comm/duplicate_comm.h).
class NodeComm {
 public:
  explicit NodeComm(MPI_Comm comm) {
    int rank = 0;
    comm::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank (node ranks)");
    comm::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_),
                    "MPI_Comm_split_type (node ranks)");
  }
  ~NodeComm() { MPI_Comm_free(&node_); }
  NodeComm(const NodeComm&) = delete;
  NodeComm& operator=(const NodeComm&) = delete;
  MPI_Comm get() const { return node_; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
};

constexpr int kUnset = -1;
constexpr int kMalformed = -2;

// SLUICE_NODE_ID as a node number, kUnset or kMalformed (reported on every rank once all have answered).
int node_id_from_environment() {
  const char* text = std::getenv("SLUICE_NODE_ID");
  if (text == nullptr) return kUnset;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  const bool malformed = end == text || *end != '\0' || errno != 0 || value < 0 || value > INT_MAX;
  return malformed ? kMalformed : static_cast<int>(value);
}

// Renumbers arbitrary node keys 0, 1, ... by first appearance.
std::vector<int> renumbered(const std::vector<int>& keys) {
  std::map<int, int> number;
  std::vector<int> nodes;
  for (const int key : keys) nodes.push_back(number.emplace(key, static_cast<int>(number.size())).first->second);
  return nodes;
}

}  // namespace

std::vector<int> node_of_each_rank(MPI_Comm comm) {
  const int from_environment = node_id_from_environment();
  int rank = 0, size = 1;
  comm::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank (node map)");
  comm::check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size (node map)");
  const NodeComm node(comm);
  const int leader = comm::all_min(node.get(), rank, "node map (lowest rank of the node)");  // a node's key
  const std::vector<int> all = comm::all_gather_ints(comm, {from_environment, leader}, "node map");
  bool every_rank_set_it = true;
  for (int r = 0; r < size; ++r) {
    if (all[2 * r] == kMalformed) {
      throw Error(ErrorCode::kInvalidArgument,
                  "SLUICE_NODE_ID on rank " + std::to_string(r) + " is not a non-negative integer");
    }
    every_rank_set_it = every_rank_set_it && all[2 * r] >= 0;
  }
  std::vector<int> keys;
  for (int r = 0; r < size; ++r) keys.push_back(all[2 * r + (every_rank_set_it ? 0 : 1)]);
  return renumbered(keys);
}

int ranks_on_this_node(MPI_Comm comm) {
  const NodeComm node(comm);
  int size = 1;
  comm::check_mpi(MPI_Comm_size(node.get(), &size), "MPI_Comm_size (ranks per node)");
  return size;
}

int cores_of_node_ranks(MPI_Comm comm) {
  const NodeComm node(comm);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) std::memset(&mask, 0xff, sizeof mask);  // unknown: any core
  unsigned char bits[sizeof mask];
  std::memcpy(bits, &mask, sizeof mask);
  comm::all_bitwise_or(node.get(), bits, static_cast<int>(sizeof bits), "cores of the node's ranks");
  std::memcpy(&mask, bits, sizeof mask);
  return std::max(CPU_COUNT(&mask), 1);
}

int rank_among_node_peers(MPI_Comm comm, bool member) {
  const NodeComm node(comm);
  int node_rank = 0;
  comm::check_mpi(MPI_Comm_rank(node.get(), &node_rank), "MPI_Comm_rank (node ranks)");
  // Members and non-members split apart; within the members, the node rank keeps comm's order.
  MPI_Comm peers = MPI_COMM_NULL;
  comm::check_mpi(MPI_Comm_split(node.get(), member ? 1 : 0, node_rank, &peers), "MPI_Comm_split (node peers)");
  int index = 0;
  const int rc = MPI_Comm_rank(peers, &index);
  MPI_Comm_free(&peers);
  comm::check_mpi(rc, "MPI_Comm_rank (node peers)");
  return member ? index : -1;
}

}  // namespace sluice::runtime
