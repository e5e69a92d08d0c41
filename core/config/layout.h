// How MPI ranks map onto pipeline stages and data-parallel replicas.
//
// Rule: world = data_parallel x stages, and the ranks of one pipeline replica are consecutive MPI ranks:
//   stage_rank = rank % stages,  replica = rank / stages.
// With stages = 4 and world = 8, ranks 0-3 form replica 0 (stages 0..3) and ranks 4-7 form replica 1.
// Consecutive placement keeps the per-microbatch point-to-point traffic between neighbouring ranks (usually on
// the same node); only the once-per-step gradient all-reduce crosses replicas.
#pragma once

#include "core/config/config.h"

namespace sluice::config {

struct Layout {
  int world;          // MPI world size
  int stages;         // pipeline ranks per replica (P)
  int data_parallel;  // replicas (DP)
  int rank;           // this process's MPI rank
  int stage_rank;     // this rank's pipeline stage, 0..stages-1
  int replica;        // this rank's data-parallel replica, 0..data_parallel-1
};

// Throws sluice::Error(kConfig) when world_size is not a multiple of pipeline.stages, when
// pipeline.data_parallel is set and stages * data_parallel != world_size, or when data.batch is not divisible
// by data_parallel * microbatches (each message names the numbers and what would work).
// Throws kInvalidArgument for a world size < 1 or a rank outside [0, world_size).
Layout make_layout(const Config& config, int world_size, int rank);

}  // namespace sluice::config
