// The layer types `sluice inspect` shows next to each layer: read from the checkpoint's own config text (the
// `config` attribute), so a custom layer appears by the name the application registered it under
// ("custom:heat_stencil") even though `sluice` itself cannot build it.
#pragma once

#include "checkpoint/summary.h"

namespace sluice::tools {

// Sets LayerSummary::type from summary.attributes["config"]. A checkpoint without a config, or with one this
// version cannot parse, keeps empty types: inspecting must not fail over what is only a label.
void fill_layer_types(checkpoint::CheckpointSummary& summary);

}  // namespace sluice::tools
