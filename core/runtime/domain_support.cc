#include "core/runtime/domain_support.h"

#include <string>

#include "core/common/error.h"
#include "core/config/domain_layout.h"

namespace sluice::runtime {

void refuse_unbuilt_domain_split(const config::Config& cfg) {
  const int64_t blocks = config::domain_block_count(cfg.pipeline.domain);
  if (blocks <= 1) return;
  std::string grid;
  for (int b : cfg.pipeline.domain) grid += (grid.empty() ? "" : ", ") + std::to_string(b);
  throw Error(ErrorCode::kUnsupported,
              "pipeline.domain [" + grid + "] splits each sample into " + std::to_string(blocks) +
                  " blocks, but domain-parallel training is not built yet: this version checks and plans the split "
                  "(sluice plan CONFIG prints the blocks and their halo bytes) and cannot train on it; leave "
                  "pipeline.domain out (or all 1) to train (docs/DOMAIN.md)");
}

}  // namespace sluice::runtime
