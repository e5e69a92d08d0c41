// Where a rank runs: which GPU of its node it drives. The rank -> stage/replica rule itself lives in
// core/config/rank_order.h (`pipeline.rank_order`, chosen from the node map by core/runtime/rank_order_choice.h):
// by default stages span nodes and a stage's replicas share one, since a gradient sum moves far more bytes than
// a stage boundary's activations. See docs/SLURM.md.
#pragma once

#include "kernels/device_request.h"

namespace sluice::runtime {

// This process's index among the ranks on its node: SLURM_LOCALID (srun), else OMPI_COMM_WORLD_LOCAL_RANK
// (mpirun), else 0 (a single process). Throws sluice::Error(kInvalidArgument) naming the variable when it is
// set but not a non-negative integer.
int node_local_rank();

// The GPU a rank drives: local_rank % gpus_on_node, -1 when the node has no GPU. The rule lives with the
// backends that apply it (kernels/device_request.h). The local rank the CUDA backend picks its GPU by is this
// rank's place among the ranks of its node that drive a GPU (node_ranks.h: rank_among_node_peers), so that in a
// pipeline with cpu stages the cpu ranks take no GPU slots; the trainer passes it in its kernels::DeviceRequest.
using kernels::device_for_local_rank;

}  // namespace sluice::runtime
