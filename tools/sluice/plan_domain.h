// `sluice plan CONFIG` with pipeline.domain: the block grid of the even split `sluice train` would use, each
// block's extents, and per layer its halo and the activation a block holds (docs/DOMAIN.md).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "core/config/config.h"
#include "core/config/domain_layout.h"

namespace sluice::tools {

struct DomainPlan {
  config::DomainLayout layout;
  std::vector<config::DomainLayerCost> costs;  // per layer
  int64_t rows_per_step = 0;  // one replica's rows per optimizer step (data.batch / replicas x accumulate)
  int64_t halo_bytes_per_sample() const;           // forward, all layers and blocks
  int64_t halo_bytes_backward_per_sample() const;  // backward, all layers and blocks
};

// std::nullopt when the config splits no sample (no pipeline.domain, or every entry 1). Throws Error(kConfig)
// naming the layer when the model cannot run on these blocks (core/config/domain_layout.h).
std::optional<DomainPlan> plan_domain(const config::Config& cfg);

// The text report: the grid, the blocks (the first 64), the per-layer table and the halo bytes per step.
void write_domain_text(std::ostream& out, const config::Config& cfg, const DomainPlan& plan);
// The JSON object `{"blocks": .., "tile": .., "block_offsets": .., "block_extents": .., "halo_bytes_per_sample":
// [per layer], "halo_bytes_backward_per_sample": [per layer], "block_output_bytes": [per layer],
// "halo_bytes_per_step": N}` (every block listed).
std::string domain_json(const DomainPlan& plan);

}  // namespace sluice::tools
