// A model's per-layer shape from the config alone: sample shapes and widths, parameter counts and per-sample FLOPs, with nothing
// allocated for the built-in layers (a custom layer is built once through its factory and dropped: its size is
// the application's). The partition (balanced_split over `flops`) and the rank-order choice use it before a rank
// knows which layers it will hold. Its widths are the sequential model's; what a pipeline stage holds and sends,
// given the skips routed between stages, is in stage_widths.h.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/config.h"
#include "core/model/builder.h"
#include "core/model/partition.h"
#include "core/model/skip_routes.h"

namespace sluice::model {

struct LayerShape {
  int64_t in = 0;   // features per sample
  int64_t out = 0;
  int64_t params = 0;  // floats
  double flops = 0.0;  // per sample, forward + backward (Layer::flops_per_sample)
  double stash_bytes = 0.0;  // per sample, declared by a custom layer (Layer::stash_bytes_per_sample) or a
                             // transformer (its T² probabilities); 0: not declared
  Layer::Arrays arrays = Layer::Arrays::kStageDevice;  // a custom layer's (Layer::arrays)
  config::SampleShape in_shape;  // the field (or rows) each sample is
  config::SampleShape out_shape;
};

// Throws Error(kConfig) naming the layer when a custom layer is not registered or its factory misbehaves
// (the same checks as build_layers).
std::vector<LayerShape> model_shape(const config::ModelSpec& spec, const CustomLayerRegistry& custom_layers);

std::vector<double> flops_of(const std::vector<LayerShape>& shapes);

// What the balanced partition weighs (partition.h), in FLOPs: each layer's FLOPs, and at each cut the bytes one
// sample sends across it (its activation forward, with the skip tensors carried past it, and the gradient back)
// at the pipeline's link bandwidth, as FLOPs at its flop rate. Every skip counts at each cut it crosses, an upper
// bound once skips are routed: the split a run uses is stage_widths.h's choose_model_split, which charges a routed
// skip once.
PartitionCosts partition_costs(const std::vector<LayerShape>& shapes, const config::PipelineSpec& pipeline);

// The skips of `spec` that travel straight between the stages of `ranges` (skip_routes.h), from its shapes: what the
// trainer lowers and runs, and what `sluice plan` prints.
SkipRoutes skip_routes_of(const config::ModelSpec& spec, const std::vector<LayerShape>& shapes,
                          const std::vector<LayerRange>& ranges);

}  // namespace sluice::model
