#include "tools/sluice/plan_domain.h"

#include <algorithm>
#include <iomanip>
#include <string>
#include <vector>

#include "core/config/domain_layout.h"

namespace sluice::tools {
namespace {

// The block table stops here: a grid of thousands of blocks would bury the rest of the plan.
constexpr int64_t kBlocksShown = 64;

std::string list_text(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

// Rows one replica trains on per optimizer step, as the rank-order estimate counts them (rank_order_choice.cc):
// data.batch over the replicas (one row per micro-batch without a batch) times optimizer.accumulate.
int64_t rows_per_step(const config::Config& cfg) {
  const int replicas = cfg.pipeline.data_parallel > 0 ? cfg.pipeline.data_parallel : 1;
  const int64_t rows = cfg.data.batch > 0 ? cfg.data.batch / replicas : cfg.pipeline.microbatches;
  return rows * cfg.optimizer.accumulate;
}

void write_blocks(std::ostream& out, const config::DomainLayout& layout) {
  out << std::left << std::setw(7) << "block" << std::setw(16) << "grid place" << std::setw(16) << "offset"
      << "extent\n";
  const int64_t shown = std::min<int64_t>(layout.block_count(), kBlocksShown);
  for (int64_t b = 0; b < shown; ++b) {
    const config::DomainBox box = layout.box(b);
    const std::vector<int> coords = layout.coords_of(b);
    out << std::setw(7) << b << std::setw(16) << list_text({coords.begin(), coords.end()}) << std::setw(16)
        << list_text(box.offset) << list_text(box.extent) << "\n";
  }
  if (shown < layout.block_count()) out << "... (" << layout.block_count() - shown << " more blocks)\n";
}

}  // namespace

void write_domain_plan(std::ostream& out, const config::Config& cfg) {
  if (config::domain_block_count(cfg.pipeline.domain) <= 1) return;
  const config::SampleShape input = config::input_shape_of(cfg.model);
  const std::vector<int64_t> global(input.begin() + 1, input.end());
  const config::DomainLayout layout = config::even_domain_layout(global, cfg.pipeline.domain, cfg.pipeline.domain_tile);
  const std::vector<config::DomainLayerCost> costs = config::domain_layer_costs(cfg.model.layers, input, layout);
  out << "domain " << list_text({cfg.pipeline.domain.begin(), cfg.pipeline.domain.end()}) << ": "
      << layout.block_count() << " blocks of the field " << config::shape_text(input)
      << " (the even split sluice train uses; canonical tile " << list_text(layout.tile) << ")\n";
  write_blocks(out, layout);
  out << "per layer, bytes per sample: the halo all blocks receive in the forward (the backward sends as many "
         "again), and the layer's output on the largest block\n"
      << std::setw(7) << "layer" << std::setw(16) << "type" << std::setw(20) << "halo low/high" << std::setw(14)
      << "halo bytes" << "block output bytes\n";
  int64_t halo = 0;
  for (size_t i = 0; i < costs.size(); ++i) {
    const config::DomainLayerCost& c = costs[i];
    out << std::setw(7) << i << std::setw(16) << config::layer_type_name(cfg.model.layers[i].type) << std::setw(20)
        << list_text(c.halo_low) + "/" + list_text(c.halo_high) << std::setw(14) << c.halo_bytes << c.block_bytes
        << "\n";
    halo += c.halo_bytes;
  }
  const int64_t rows = rows_per_step(cfg);
  out << "halo bytes: " << halo << " per sample forward, " << 2 * halo << " forward and backward; "
      << 2 * halo * rows << " per optimizer step of one replica (" << rows << " rows)\n\n";
}

}  // namespace sluice::tools
