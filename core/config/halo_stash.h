// What `pipeline.recompute_halos: stash` keeps (docs/DOMAIN.md "Recompute and halos"), for the memory planners
// (`sluice plan`'s peak stash, `pipeline.schedule: auto` under pipeline.memory_budget). On a block, a layer whose
// forward fills a halo — conv (widths pad_low / pad_high; a 1-wide kernel's width-0 fill is a copy) and linear
// upsample (width 1 in every dimension, as DomainLinearUpsample::pad_input fills it) — leaves its halo-filled input;
// when a recompute drops the layer, `stash` keeps that tensor from F until the recompute (StageModule's
// Stash::halo_inputs), `exchange` drops it. Pure arithmetic over the layer specs; no MPI.
#pragma once

#include <vector>

#include "core/config/domain_layout.h"
#include "core/config/layer_spec.h"
#include "core/config/sample_shape.h"

namespace sluice::config {

// Per layer of `layers` (walked from the field `input`), the bytes per sample of its halo-filled input on the block
// `box` (at the input resolution; scaled to each layer's level): 4 · C_in · Π (block extent + low + high) for a
// conv or a linear upsample, 0 for every other layer. Throws Error(kConfig) naming the layer when a layer cannot run
// on a block (split_layers' problem).
std::vector<double> halo_input_bytes(const std::vector<LayerSpec>& layers, const SampleShape& input,
                                     const DomainBox& box);

}  // namespace sluice::config
