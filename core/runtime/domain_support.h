// What the runtime does with `pipeline.domain` today: the layout, its checks and `sluice plan` are built
// (core/config/domain_layout.h, docs/DOMAIN.md); running a model on blocks (halo exchange, the domain group's
// reductions, blocks of samples in and out) is not yet. Until it is, a split is refused at start rather than run
// as something it is not.
#pragma once

#include "core/config/config.h"

namespace sluice::runtime {

// Throws Error(kUnsupported) naming pipeline.domain when it splits a sample into more than one block; nothing
// otherwise (no key, or every entry 1).
void refuse_unbuilt_domain_split(const config::Config& cfg);

}  // namespace sluice::runtime
