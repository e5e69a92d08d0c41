// `sluice plan CONFIG` with pipeline.domain: the block grid of the even split `sluice train` would use, each
// block's extents, and per layer its halo and the activation a block holds (docs/DOMAIN.md).
#pragma once

#include <ostream>

#include "core/config/config.h"

namespace sluice::tools {

// Writes nothing when the config splits no sample (no pipeline.domain, or every entry 1). Throws Error(kConfig)
// naming the layer when the model cannot run on these blocks (core/config/domain_layout.h).
void write_domain_plan(std::ostream& out, const config::Config& cfg);

}  // namespace sluice::tools
