// Which stages a custom layer may run on (sluice_layer_ops::device; docs/GPU.md, "Custom layers on the device"): a
// layer registered for host arrays cannot read a cuda stage's device tensors, and one registered for device arrays
// has none on a cpu stage. Checked at trainer start, before any stage is built, so the refusal names the layer
// instead of the run failing (or crashing in the callback) later.
#pragma once

#include <vector>

#include "core/config/config.h"
#include "core/model/model_shape.h"
#include "core/model/partition.h"
#include "core/schedule/schedule.h"

namespace sluice::runtime {

// Error(kConfig) naming the first custom layer bound to the other kind of memory than its stage's device, and
// Error(kUnsupported) for a device-array layer on a cuda stage (not built in this version). `shapes` are
// model::model_shape's, `ranges` the chunks' layers, `lowered` maps chunks to pipeline ranks. A pure function of the
// config and the registrations: the same verdict on every rank that registered the same layers.
void check_custom_layer_devices(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                                const std::vector<model::LayerRange>& ranges, const schedule::Schedule& lowered);

}  // namespace sluice::runtime
