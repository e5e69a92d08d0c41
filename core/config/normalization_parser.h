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
// normalized under cross_entropy (they are class probabilities). `input_channels` / `output_channels` are the
// channel counts of a field side (-1: rows or unknown): a given list of that many values is per channel.
NormalizationSpec parse_normalization(const ConfigNode& node, int64_t input_features, int64_t output_features,
                                      model::LossKind loss, int64_t input_channels = -1,
                                      int64_t output_channels = -1);

}  // namespace sluice::config
