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

}  // namespace sluice::runtime
