// Parse-time bounds on sizes, derived from the products each size takes part in rather than from arbitrary caps:
// a width is a BLAS matrix dimension (a 32-bit int in cblas_sgemm), data.batch × every width × 4 bytes is an
// activation buffer, in × out × 4 bytes a weight, data.batch × optimizer.accumulate the samples of one window.
// A value whose product does not fit is refused here, naming its key and line, instead of wrapping later into a
// small allocation and a crash.
#pragma once

#include "core/config/config.h"
#include "core/config/config_node.h"

namespace sluice::config {

// Throws sluice::Error(kConfig) naming the key (the larger factor of the first product that overflows).
void check_size_bounds(const ConfigNode& root, const Config& config);

}  // namespace sluice::config
