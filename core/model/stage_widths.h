// What crosses a pipeline boundary and what a stage holds, given routed skips (skip_routes.h). model_shape's
// LayerShape::in / out count every skip carried past a layer in the sequential model; between pipeline stages a
// skip read two or more stages after its producer travels in its own message instead, and the stages between
// neither hold nor forward it. The stash estimates (`sluice plan`, pipeline.schedule auto), the rank-order traffic
// and the partition's cut cost read the widths from here, so they all count a routed skip the way the executor
// moves it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/config.h"
#include "core/model/model_shape.h"

namespace sluice::model {

// Each layer's input width (features per sample) as the stage `range` builds it: its main tensor and only the skips
// the stage makes or reads (skip_plan's ranged form). Layers outside `range` keep LayerShape::in.
std::vector<int64_t> stage_in_widths(const config::ModelSpec& spec, const std::vector<LayerShape>& shapes,
                                     const LayerRange& range);

// Per boundary s (between stage s and s + 1 of `ranges`): the width of the activation message, the main tensor and
// the skips carried (not routed) across it. `routes` are skip_routes_of(spec, shapes, ranges).
std::vector<int64_t> activation_widths(const std::vector<LayerShape>& shapes, const std::vector<LayerRange>& ranges,
                                       const SkipRoutes& routes);

// The partition's cut costs with routed skips charged once (partition.h's PartitionCosts): the cut after layer i
// costs, in FLOPs at the pipeline's flop rate, the bytes one sample sends across it and its gradient back at the
// link bandwidth: layer i's main output, each skip carried across it, and a skip routed under `ranges` only at the
// cut that ends its producer's stage (it goes straight from there to its reader; the stages between do not send it).
PartitionCosts routed_partition_costs(const config::ModelSpec& spec, const std::vector<LayerShape>& shapes,
                                      const config::PipelineSpec& pipeline, const std::vector<LayerRange>& ranges);

// The split a run uses: pipeline.split when given (checked), else the balanced split under routed skips. The cut
// cost depends on the routes and the routes on the split, so: first the split with every skip charged at every cut
// it crosses (partition_costs: an upper bound), then the split balanced under routed_partition_costs of that split's
// routes; each is then weighed under its own routes (slowest_chunk of routed_partition_costs) and the second kept
// only when it is faster (ties keep the first), so the choice never gets worse by the charge it uses.
// Without skips this is choose_split(pipeline.split, partition_costs(shapes, pipeline), chunks).
std::vector<int> choose_model_split(const config::ModelSpec& spec, const std::vector<LayerShape>& shapes,
                                    const config::PipelineSpec& pipeline, int chunks);

}  // namespace sluice::model
