// What the runtime cannot do yet with a `pipeline.domain` split (docs/DOMAIN.md "What runs now"): the trainer runs a
// model on blocks (core/runtime/trainer_domain.h), but a few things still need a whole sample on a rank or host
// memory. Each is refused, naming what, rather than run as something it is not.
#pragma once

#include <string>

#include "core/config/config.h"

namespace sluice::runtime {

// At trainer start, on every rank alike (a pure function of the config): Error(kUnsupported) naming the setting
// when pipeline.domain splits a sample into more than one block and the config asks for what a split cannot run
// yet: loss: custom (the host's callback sees a whole sample), a cuda stage (the halo exchange reads host memory).
// Nothing otherwise.
void refuse_unbuilt_domain_split(const config::Config& cfg);


}  // namespace sluice::runtime
