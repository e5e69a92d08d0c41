// `sluice plan` on a config with custom layers: the application's layers are not there, so each one is planned
// from what its entry declares (`{type: custom, name: N, outputs: [..], cost: {flops: .., bytes: ..}}`) through a
// stand-in that has the declared widths, FLOPs and stash and computes zeros.
#pragma once

#include "core/config/config.h"
#include "core/model/builder.h"

namespace sluice::tools {

// A registry with a stand-in for every custom layer of `model`. Throws Error(kConfig) naming the first custom
// layer whose entry declares no `outputs` (plan cannot know its width).
model::CustomLayerRegistry declared_layers(const config::ModelSpec& model);

}  // namespace sluice::tools
