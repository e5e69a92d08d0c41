#include "tools/sluice/plan_domain.h"

#include <algorithm>
#include <iomanip>
#include <string>
#include <vector>


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

int64_t DomainPlan::halo_bytes_per_sample() const {
  int64_t total = 0;
  for (const config::DomainLayerCost& c : costs) total += c.halo_bytes;
  return total;
}

int64_t DomainPlan::halo_bytes_backward_per_sample() const {
  int64_t total = 0;
  for (const config::DomainLayerCost& c : costs) total += c.halo_bytes_backward;
  return total;
}

std::optional<DomainPlan> plan_domain(const config::Config& cfg) {
  if (config::domain_block_count(cfg.pipeline.domain) <= 1) return std::nullopt;
  const config::SampleShape input = config::input_shape_of(cfg.model);
  const std::vector<int64_t> global(input.begin() + 1, input.end());
  DomainPlan plan;
  plan.layout = config::even_domain_layout(global, cfg.pipeline.domain, cfg.pipeline.domain_tile);
  plan.costs = config::domain_layer_costs(cfg.model.layers, input, plan.layout);
  plan.rows_per_step = rows_per_step(cfg);
  return plan;
}

void write_domain_text(std::ostream& out, const config::Config& cfg, const DomainPlan& plan) {
  const config::DomainLayout& layout = plan.layout;
  out << "domain " << list_text({layout.blocks.begin(), layout.blocks.end()}) << ": " << layout.block_count()
      << " blocks of the field " << config::shape_text(config::input_shape_of(cfg.model))
      << " (the even split sluice train uses; canonical tile " << list_text(layout.tile) << ")\n";
  write_blocks(out, layout);
  out << "per layer, bytes per sample: the halo all blocks receive in the forward (of the input; widths low/high) "
         "and in the backward (of the output gradient), and the layer's output on the largest block\n"
      << std::setw(7) << "layer" << std::setw(16) << "type" << std::setw(20) << "halo low/high" << std::setw(14)
      << "fwd halo" << std::setw(14) << "bwd halo" << "block output\n";
  for (size_t i = 0; i < plan.costs.size(); ++i) {
    const config::DomainLayerCost& c = plan.costs[i];
    out << std::setw(7) << i << std::setw(16) << config::layer_type_name(cfg.model.layers[i].type) << std::setw(20)
        << list_text(c.halo_low) + "/" + list_text(c.halo_high) << std::setw(14) << c.halo_bytes << std::setw(14)
        << c.halo_bytes_backward << c.block_bytes << "\n";
  }
  const int64_t forward = plan.halo_bytes_per_sample(), backward = plan.halo_bytes_backward_per_sample();
  out << "halo bytes per sample: " << forward << " forward, " << backward << " backward; "
      << (forward + backward) * plan.rows_per_step << " per optimizer step of one replica (" << plan.rows_per_step
      << " rows)\n\n";
}

std::string domain_json(const DomainPlan& plan) {
  const config::DomainLayout& layout = plan.layout;
  std::vector<std::string> offsets, extents;
  for (int64_t b = 0; b < layout.block_count(); ++b) {
    const config::DomainBox box = layout.box(b);
    offsets.push_back(list_text(box.offset));
    extents.push_back(list_text(box.extent));
  }
  std::vector<int64_t> halo, backward, block;
  for (const config::DomainLayerCost& c : plan.costs) {
    halo.push_back(c.halo_bytes);
    backward.push_back(c.halo_bytes_backward);
    block.push_back(c.block_bytes);
  }
  auto joined = [](const std::vector<std::string>& items) {
    std::string text = "[";
    for (size_t i = 0; i < items.size(); ++i) text += (i ? "," : "") + items[i];
    return text + "]";
  };
  return "{\"blocks\":" + list_text({layout.blocks.begin(), layout.blocks.end()}) + ",\"tile\":" +
         list_text(layout.tile) + ",\"block_offsets\":" + joined(offsets) + ",\"block_extents\":" +
         joined(extents) + ",\"halo_bytes_per_sample\":" + list_text(halo) +
         ",\"halo_bytes_backward_per_sample\":" + list_text(backward) + ",\"block_output_bytes\":" +
         list_text(block) + ",\"halo_bytes_per_step\":" +
         std::to_string((plan.halo_bytes_per_sample() + plan.halo_bytes_backward_per_sample()) * plan.rows_per_step) +
         "}";
}

}  // namespace sluice::tools
