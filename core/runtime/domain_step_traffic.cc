#include "core/runtime/domain_step_traffic.h"

namespace sluice::runtime {

DomainStepTraffic domain_step_traffic(const config::Config& cfg, const config::DomainLayout& layout, int64_t block,
                                      const std::vector<std::pair<int, int>>& layer_ranges, int64_t rows,
                                      int microbatches) {
  const std::vector<config::SplitLayer> layers =
      config::split_layers(cfg.model.layers, config::input_shape_of(cfg.model));
  DomainStepTraffic traffic;
  for (const auto& [first, last] : layer_ranges) {
    for (int i = first; i < last && i < static_cast<int>(layers.size()); ++i) {
      for (const config::HaloPass pass : {config::HaloPass::kForward, config::HaloPass::kBackward}) {
        // The model's first layer computes no input gradient (StageModule::skips_input_grad): no backward fill.
        if (pass == config::HaloPass::kBackward && i == 0) continue;
        const config::HaloSend sent = config::halo_sends(layers[static_cast<size_t>(i)], layout, block, pass);
        traffic.halo_bytes += sent.bytes_per_sample * rows;
        traffic.halo_messages += sent.messages * microbatches;
      }
    }
  }
  return traffic;
}

int64_t domain_gather_bytes(const config::Config& cfg, const config::DomainLayout& layout, int64_t block,
                            const std::vector<std::pair<int, int>>& layer_ranges, const std::vector<int64_t>& params,
                            int64_t rows, int microbatches) {
  const std::vector<config::LayerSpec>& specs = cfg.model.layers;
  const std::vector<config::SplitLayer> layers = config::split_layers(specs, config::input_shape_of(cfg.model));
  const config::DomainBox box = layout.box(block);
  int64_t held = 1;
  for (size_t d = 0; d < box.extent.size(); ++d) held *= box.extent[d] / layout.tile[d];
  constexpr int64_t kTileIndex = 8;  // an int64 tile index per held tile, in every gather
  const int64_t m = microbatches;
  int64_t per_other = 0;  // bytes to each other block
  for (const auto& [first, last] : layer_ranges) {
    for (int i = first; i < last && i < static_cast<int>(layers.size()); ++i) {
      const size_t l = static_cast<size_t>(i);
      if (l < params.size() && params[l] > 0) per_other += held * (kTileIndex + 4 * params[l]);
      const config::LayerType type = specs[l].type;
      if (type == config::LayerType::kGroupNorm || type == config::LayerType::kInstanceNorm) {
        const int64_t groups = type == config::LayerType::kGroupNorm ? specs[l].groups : layers[l].in.front();
        const int64_t pass = held * (kTileIndex * m + 16 * groups * rows);  // Σ over micro-batches of 8 + 16·S·G
        per_other += i == 0 ? pass : 2 * pass;
      }
      if (i + 1 == static_cast<int>(specs.size())) per_other += held * (kTileIndex + 8) * m;  // the field loss
    }
  }
  return per_other * (layout.block_count() - 1);
}

}  // namespace sluice::runtime
