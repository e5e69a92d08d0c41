// The halo traffic of one training call on a domain split, computed on paper (issue 32, docs/DOMAIN.md "What the
// start report prints"): what `sluice train`'s start report prints beside each block and what the trainer's
// measured counters (StepCounters::halo_bytes_sent) must equal. Pure arithmetic over the config and the layout.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/config/config.h"
#include "core/config/domain_layout.h"

namespace sluice::runtime {

struct DomainStepTraffic {
  int64_t halo_bytes = 0;     // sent by the block in one call
  int64_t halo_messages = 0;
};

// What `block` sends in one call of `rows` samples cut into `microbatches` micro-batches, for the layers
// [first, last) of each of `layer_ranges` (its stages): every layer's forward halo fill and its backward's fill of
// the output gradient (but global layer 0's, whose input gradient nobody computes), once per micro-batch (bytes scale with the rows, messages with the micro-batches). Excludes
// the forward halos a recompute re-exchanges (pipeline.recompute_halos: exchange) — the report says so.
DomainStepTraffic domain_step_traffic(const config::Config& cfg, const config::DomainLayout& layout, int64_t block,
                                      const std::vector<std::pair<int, int>>& layer_ranges, int64_t rows,
                                      int microbatches);

// The tile-gather bytes `block` sends in one call (core/comm/tile_gather.h; docs/DOMAIN.md's table "Messages per op
// and their bytes"), for the same layers, rows and micro-batches: each gather sends the block's held tiles' indices
// (8 bytes a tile) and values to every other block. Per call, every layer with parameters (`params`: floats per
// global layer) gathers its per-tile partials once (8 + 4 · params per tile); per micro-batch, a group or instance
// norm gathers S·G·2 doubles per tile forward and again backward (not at global layer 0, whose input gradient
// nobody computes), and the stage holding the model's last layer the loss's one double per tile. Excludes the
// norms' gathers a recompute repeats. A block holds the same number of tiles at every level.
int64_t domain_gather_bytes(const config::Config& cfg, const config::DomainLayout& layout, int64_t block,
                            const std::vector<std::pair<int, int>>& layer_ranges, const std::vector<int64_t>& params,
                            int64_t rows, int microbatches);

}  // namespace sluice::runtime
