// How MPI ranks map onto pipeline stages and data-parallel replicas.
//
// Rule: world = data_parallel x stages x blocks (blocks: the pipeline.domain split, 1 without one). Which ranks form
// one pipeline, a stage's replicas and a stage's blocks is `pipeline.rank_order` (core/config/rank_order.h: the
// order the world ranks run through the three dimensions). Without a split, stages_within_node gives
// stage_rank = rank % stages, replica = rank / stages (ranks 0-3 are replica 0 with stages = 4); stages_across_nodes
// gives replica = rank % data_parallel, stage_rank = rank / data_parallel (ranks 0-1 are stage 0's replicas with
// data_parallel = 2). With a split those two keep a stage's blocks consecutive (block = rank % blocks) and place
// rank / blocks as above; the other four orders put stages or replicas innermost. This struct is the one place
// stage_rank, replica and block come from; the runtime's communicators follow it (core/comm/mpi_context.h).
#pragma once

#include "core/config/config.h"

namespace sluice::config {

struct Layout {
  int world;          // MPI world size
  int stages;         // pipeline ranks per replica (P)
  int data_parallel;  // replicas (DP)
  int blocks;         // domain blocks per sample (pipeline.domain; 1 without a split)
  int rank;           // this process's MPI rank
  int stage_rank;     // this rank's pipeline stage, 0..stages-1
  int replica;        // this rank's data-parallel replica, 0..data_parallel-1
  int block;          // this rank's domain block, 0..blocks-1 (row-major over the block grid)
  RankOrder order;    // resolved: never kAuto
};

// Throws sluice::Error(kConfig) when world_size is not a multiple of pipeline.stages x blocks, when
// pipeline.data_parallel is set and stages * data_parallel * blocks != world_size (naming all three counts), or when data.batch is not divisible
// by data_parallel * microbatches (each message names the numbers and what would work).
// Throws kInvalidArgument for a world size < 1 or a rank outside [0, world_size).
// `order` must be resolved (the runtime resolves an auto config.pipeline.rank_order from the node map first):
// kAuto is kInvalidArgument.
Layout make_layout(const Config& config, int world_size, int rank, RankOrder order);

// For checking a config before the node map is known: the layout under config.pipeline.rank_order, or under
// stages_within_node when that is auto. The checks do not depend on the order.
Layout make_layout(const Config& config, int world_size, int rank);

}  // namespace sluice::config
