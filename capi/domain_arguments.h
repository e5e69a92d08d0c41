// sluice_trainer_set_domain's arguments read into the runtime's declaration (core/runtime/declared_domain.h), each
// refused by name: the C side of what the start-time gather checks again across ranks.
#pragma once

#include <cstdint>

#include "core/config/config.h"
#include "core/runtime/declared_domain.h"

namespace sluice::capi {

// Throws Error(kInvalidArgument) naming the argument (and the dimension) for a NULL array, an ndims that is not
// the number of spatial dimensions of model.inputs, and what runtime::declared_domain_problem refuses.
runtime::DeclaredDomain read_declared_domain(const config::Config& cfg, int ndims, const int64_t* global_extent,
                                             const int64_t* block_offset, const int64_t* block_extent);

}  // namespace sluice::capi
