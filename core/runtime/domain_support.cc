#include "core/runtime/domain_support.h"

#include <string>

#include "core/common/error.h"
#include "core/config/domain_layout.h"

namespace sluice::runtime {
namespace {

std::string split_text(const config::Config& cfg) {
  std::string grid;
  for (int b : cfg.pipeline.domain) grid += (grid.empty() ? "" : ", ") + std::to_string(b);
  return "pipeline.domain [" + grid + "] (" + std::to_string(config::domain_block_count(cfg.pipeline.domain)) +
         " blocks)";
}

}  // namespace

void refuse_unbuilt_domain_split(const config::Config& cfg) {
  if (config::domain_block_count(cfg.pipeline.domain) <= 1) return;
  const std::string split = split_text(cfg);
  if (cfg.loss == model::LossKind::kCustom) {
    throw Error(ErrorCode::kUnsupported, split + " with loss: custom is not supported: the host's loss function "
                                                 "sees a whole sample; use mse or cross_entropy (docs/DOMAIN.md)");
  }
  for (int stage = 0; stage < cfg.pipeline.stages; ++stage) {
    if (cfg.device_for_stage(stage) == config::DeviceKind::kCuda) {
      throw Error(ErrorCode::kUnsupported, split + " on device cuda (stage " + std::to_string(stage) +
                                               ") is not supported yet: the halo exchange reads host memory; use "
                                               "device: cpu (docs/DOMAIN.md)");
    }
  }
}

}  // namespace sluice::runtime
