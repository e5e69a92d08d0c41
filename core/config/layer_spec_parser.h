// Parses `model.layers` entries into LayerSpec, rejecting keys a layer type does not know and values its
// type cannot use (a linear layer without `outputs`, dropout with p = 1, ...). The only place a layer entry is
// checked: the builder and everything after it trust the LayerSpec. Type names come from layer_spec.h.
#pragma once

#include <vector>

#include "core/config/config.h"
#include "core/config/config_node.h"

namespace sluice::config {

LayerSpec parse_layer_spec(const ConfigNode& entry);

// `layers` must be a non-empty sequence.
std::vector<LayerSpec> parse_layer_specs(const ConfigNode& layers);

}  // namespace sluice::config
