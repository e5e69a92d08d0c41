// Resolves `pipeline.rank_order` at start: the node map from MPI, this model's traffic per optimizer step, and
// rank 0's choice broadcast to all (core/config/rank_order.h has the rule, core/config/inter_node_traffic.h the
// arithmetic).
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/config/inter_node_traffic.h"
#include "core/model/model_shape.h"

namespace sluice::runtime {

// One replica's traffic per optimizer step for this model: activations and their gradients at each model-chunk
// boundary between pipeline ranks (`stage_to_rank`: model chunk -> pipeline rank, from the schedule) and each
// routed skip from its sender's rank to its reader's (skip_routes.h: not at the boundaries it passes), for
// data.batch / data_parallel rows per call (one row per micro-batch when the config has no data.batch: the API
// passes batches in) times optimizer.accumulate calls; and each chunk's parameter floats. With a split also each
// stage's halos per link, each boundary cut into its blocks and each block's tile gathers (inter_node_traffic.h).
config::StepTraffic step_traffic(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                                 const std::vector<int>& split, const std::vector<int>& stage_to_rank,
                                 int data_parallel);

// Collective over `world` (through a private duplicate): gathers the node map, lets world rank 0 run `decide`
// on it and broadcasts the result, so every rank gets the same order. When `decide` throws on rank 0 (a model the
// later build will refuse with its own agreed error), the requested order is kept (auto: stages_within_node).
config::RankOrderChoice agree_rank_order(
    MPI_Comm world, config::RankOrder requested,
    const std::function<config::RankOrderChoice(const std::vector<int>& node_of_rank)>& decide);

// One line for the run report: the order, how it was chosen and the inter-node bytes of each option compared; with a
// split also the order's nesting of blocks, stages and replicas (the two old names do not say where blocks go).
std::string describe(const config::RankOrderChoice& choice, config::RankOrder requested);

}  // namespace sluice::runtime
