// What `sluice plan CONFIG` adds to a schedule's plan from the model in the config: the bytes one micro-batch
// stashes on each pipeline stage under the config's recompute policy, and the forward work recomputation adds to
// each backward. For a model that fits comfortably in memory the bytes are measured: every stage is built as the
// trainer builds it (same split, same StageModule and policy, CPU backend) and runs one forward on a micro-batch of
// zeros. A larger model (more than kLargestMeasuredModel parameters: a 1 B-parameter transformer would take
// gigabytes and minutes) is sized from its layer shapes alone, nothing built: each layer keeps what it declares
// (LayerShape::stash_bytes; a transformer block its activations and T² probabilities) or else its input, and the
// recompute policy keeps each dropped run's input instead, as StageModule does. On a split field under
// `pipeline.recompute_halos: stash` either adds, from the shapes, the halo-filled input of every dropped conv and
// linear upsampling (runtime::rank_halo_stash: the stages here are plain layers on the block, without halos).
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/config.h"

namespace sluice::tools {

struct StageMemory {
  int64_t rows = 0;                  // rows per micro-batch the measurement used
  std::vector<double> stash_bytes;   // per global stage (P*V), one micro-batch
  double recompute_share = 0.0;      // recomputed forward FLOPs / all forward FLOPs (full: 1, none: 0)
  bool estimated = false;            // sized from the layer shapes (a model too large to build), not measured
  bool halo_inputs = false;          // stash_bytes include the halo-filled inputs recompute_halos: stash keeps
};

// Parameters (floats) above which a model is sized from its shapes instead of built: 2^26, 256 MiB of fp32.
constexpr int64_t kLargestMeasuredModel = int64_t{1} << 26;

// `stages`, `chunks` and `microbatches` are the plan's (the config's unless flags override them). Rows per
// micro-batch: data.batch / (replicas x microbatches), replicas = pipeline.data_parallel, or 1 when it is derived
// from the world size. Throws Error(kConfig) when data.batch does not divide, or the model cannot be split.
// Measured, or estimated for a model above kLargestMeasuredModel parameters.
StageMemory measure_stage_memory(const config::Config& cfg, int stages, int chunks, int microbatches);
// Always estimated from the layer shapes (what measure_stage_memory does for a large model), for any model.
StageMemory estimate_stage_memory(const config::Config& cfg, int stages, int chunks, int microbatches);

}  // namespace sluice::tools
