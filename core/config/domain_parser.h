// `pipeline.domain` and `pipeline.domain_tile` (docs/DOMAIN.md, "Configuration and layout").
#pragma once

#include "core/config/config.h"
#include "core/config/config_node.h"

namespace sluice::config {

// Reads both keys from `root`'s pipeline section (when there is one) into `config.pipeline`, after the model:
// one positive entry per spatial dimension of model.inputs (a model on rows takes neither), no more blocks than
// points, a tile that divides the field and is whole at every layer; with more than one block, every layer must
// run on a block (refused naming its entry). A field model without domain_tile gets default_domain_tile's.
// Whether the blocks of a layout fit the layers is checked with the layout (core/config/domain_layout.h).
void parse_domain(const ConfigNode& root, Config& config);

}  // namespace sluice::config
