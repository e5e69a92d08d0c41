// What `sluice plan CONFIG` adds to a schedule's plan from the model in the config: the bytes one micro-batch
// stashes on each pipeline stage under the config's recompute policy, and the forward work recomputation adds to
// each backward. The bytes are measured, not estimated: every stage is built as the trainer builds it (same
// split, same StageModule and policy, CPU backend) and runs one forward on a micro-batch of zeros.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/config.h"

namespace sluice::tools {

struct StageMemory {
  int64_t rows = 0;                  // rows per micro-batch the measurement used
  std::vector<double> stash_bytes;   // per global stage (P*V), one micro-batch
  double recompute_share = 0.0;      // recomputed forward FLOPs / all forward FLOPs (full: 1, none: 0)
};

// `stages`, `chunks` and `microbatches` are the plan's (the config's unless flags override them). Rows per
// micro-batch: data.batch / (replicas x microbatches), replicas = pipeline.data_parallel, or 1 when it is derived
// from the world size. Throws Error(kConfig) when data.batch does not divide, or the model cannot be split.
StageMemory measure_stage_memory(const config::Config& cfg, int stages, int chunks, int microbatches);

}  // namespace sluice::tools
