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

}  // namespace sluice::runtime
