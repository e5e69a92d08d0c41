// Parses the `normalization` section (core/config/normalization_spec.h). Part of the config parser; errors name
// the key and line.
#pragma once

#include <cstdint>

#include "core/config/config_node.h"
#include "core/config/normalization_spec.h"
#include "core/model/loss_kind.h"

namespace sluice::config {

// `node` is the `normalization` map. `input_features` is model.inputs; `output_features` the model's output width,
// or negative when a custom layer makes it unknown here (the trainer checks the lengths then). Targets cannot be
// normalized under cross_entropy (they are class probabilities).
NormalizationSpec parse_normalization(const ConfigNode& node, int64_t input_features, int64_t output_features,
                                      model::LossKind loss);

}  // namespace sluice::config
