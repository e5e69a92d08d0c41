#include "core/config/halo_stash.h"

#include <cstdint>
#include <string>

#include "core/common/error.h"

namespace sluice::config {

std::vector<double> halo_input_bytes(const std::vector<LayerSpec>& layers, const SampleShape& input,
                                     const DomainBox& box) {
  const std::vector<SplitLayer> walked = split_layers(layers, input);
  std::vector<double> bytes(layers.size(), 0.0);
  for (size_t i = 0; i < walked.size(); ++i) {
    const SplitLayer& s = walked[i];
    if (!s.problem.empty()) {
      throw Error(ErrorCode::kConfig, "config: " + layer_label(static_cast<int>(i), layers[i]) +
                                          " cannot run on a split field (pipeline.domain): " + s.problem);
    }
    const bool conv = layers[i].type == LayerType::kConv;
    const bool linear = layers[i].type == LayerType::kUpsample &&
                        resample_geometry(layers[i], s.in).mode == kernels::ResampleMode::kLinear;
    if (!conv && !linear) continue;
    double floats = static_cast<double>(s.in.front());  // the input's channels
    for (size_t d = 0; d < box.extent.size(); ++d) {
      const int64_t extent = box.extent[d] * s.in_scale.den[d] / s.in_scale.num[d];  // the block at this level
      floats *= static_cast<double>(conv ? extent + s.halo_low[d] + s.halo_high[d] : extent + 2);
    }
    bytes[i] = 4.0 * floats;
  }
  return bytes;
}

}  // namespace sluice::config
