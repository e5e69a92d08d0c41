#include "core/runtime/custom_layer_devices.h"

#include <string>

#include "core/common/error.h"

namespace sluice::runtime {

namespace {

using Arrays = model::Layer::Arrays;

std::string named(const config::Config& cfg, int layer, int stage) {
  return "custom layer '" + cfg.model.layers[static_cast<size_t>(layer)].name + "' (model.layers[" +
         std::to_string(layer) + "], on pipeline stage " + std::to_string(stage) + ")";
}

void check_one(const config::Config& cfg, Arrays arrays, int layer, int stage) {
  const bool cuda = cfg.device_for_stage(stage) == config::DeviceKind::kCuda;
  if (arrays == Arrays::kHost && cuda) {
    throw Error(ErrorCode::kConfig,
                named(cfg, layer, stage) +
                    " was registered with sluice_layer_ops.device = 0 (host arrays) but its stage's device is cuda, "
                    "whose tensors its callbacks cannot read: run that stage on device: cpu");
  }
  if (arrays == Arrays::kDevice && !cuda) {
    throw Error(ErrorCode::kConfig, named(cfg, layer, stage) +
                                        " was registered with sluice_layer_ops.device = 1 (CUDA device arrays) but its "
                                        "stage's device is cpu: register it with device = 0, or run the stage on "
                                        "device: cuda");
  }
  if (arrays == Arrays::kDevice) {
    throw Error(ErrorCode::kUnsupported, named(cfg, layer, stage) +
                                             ": custom layers on device arrays (sluice_layer_ops.device = 1) are not "
                                             "built in this version; register it with device = 0 and run its stage "
                                             "on device: cpu (docs/GPU.md, \"Custom layers on the device\")");
  }
}

}  // namespace

void check_custom_layer_devices(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                                const std::vector<model::LayerRange>& ranges, const schedule::Schedule& lowered) {
  for (size_t chunk = 0; chunk < ranges.size(); ++chunk) {
    const int stage = lowered.rank_of(static_cast<int>(chunk));  // the pipeline rank whose device it runs on
    for (int layer = ranges[chunk].first; layer < ranges[chunk].last; ++layer) {
      const Arrays arrays = shapes[static_cast<size_t>(layer)].arrays;
      if (arrays != Arrays::kStageDevice) check_one(cfg, arrays, layer, stage);
    }
  }
}

}  // namespace sluice::runtime
