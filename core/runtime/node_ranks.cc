#include "core/runtime/node_ranks.h"

#include "core/comm/mpi_context.h"

namespace sluice::runtime {
namespace {

// This node's ranks of `comm`, in `comm` rank order; freed on scope exit.
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

}  // namespace

int ranks_on_this_node(MPI_Comm comm) {
  const NodeComm node(comm);
  int size = 1;
  comm::check_mpi(MPI_Comm_size(node.get(), &size), "MPI_Comm_size (ranks per node)");
  return size;
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
