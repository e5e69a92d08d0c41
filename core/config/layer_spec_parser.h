// Parses `model.layers` entries into LayerSpec, rejecting keys a layer type does not know and values its
// type cannot use (a linear layer without `outputs`, dropout with p = 1, ...).
#pragma once

#include <vector>

#include "core/config/config.h"
#include "core/config/config_node.h"

namespace sluice::config {

// The layer type names the parser accepts, in the order error messages list them.
const std::vector<std::string>& layer_type_names();

LayerSpec parse_layer_spec(const ConfigNode& entry);

// `layers` must be a non-empty sequence.
std::vector<LayerSpec> parse_layer_specs(const ConfigNode& layers);

}  // namespace sluice::config
