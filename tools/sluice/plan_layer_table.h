// The per-layer table `sluice plan CONFIG` prints before the schedule, as torchinfo's summary does for PyTorch:
// each layer's index, type, output shape per sample, parameters, forward FLOPs per sample and output bytes per
// sample, then the totals. From the config alone (core/model/model_shape.h); nothing is allocated.
#pragma once

#include <ostream>

#include "core/config/config.h"

namespace sluice::tools {

void write_layer_table(std::ostream& out, const config::Config& cfg);

}  // namespace sluice::tools
