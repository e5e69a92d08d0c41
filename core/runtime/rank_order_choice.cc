#include "core/runtime/rank_order_choice.h"

#include <cmath>
#include <cstdio>

#include "core/comm/duplicate_comm.h"
#include "core/comm/rank_zero_decides.h"
#include "core/common/error.h"
#include "core/config/domain_layout.h"
#include "core/model/partition.h"
#include "core/model/stage_widths.h"
#include "core/runtime/domain_step_traffic.h"
#include "core/runtime/node_ranks.h"

namespace sluice::runtime {

namespace {

// Rows one replica trains on per call (one per micro-batch when the API passes the batches in).
int64_t rows_per_call(const config::Config& cfg, int data_parallel) {
  return cfg.data.batch > 0 ? cfg.data.batch / data_parallel : cfg.pipeline.microbatches;
}

// Rows one replica trains on per optimizer step.
int64_t rows_per_step(const config::Config& cfg, int data_parallel) {
  return rows_per_call(cfg, data_parallel) * cfg.optimizer.accumulate;
}

// With a split: what each block sends to every other block of its stage's domain group per optimizer step, the
// start report's per-call number (domain_gather_bytes: parameter partials, norm statistics, the loss) for the
// stage's layers, once per call of the step.
void add_tile_gathers(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                      const std::vector<int>& layer_stage, const config::DomainLayout& layout, int data_parallel,
                      config::StepTraffic& traffic) {
  std::vector<int64_t> params;
  for (const model::LayerShape& shape : shapes) params.push_back(shape.params);
  for (int stage = 0; stage < cfg.pipeline.stages; ++stage) {
    std::vector<std::pair<int, int>> ranges;  // the stage's layers, one range each (the sum does not care)
    for (size_t l = 0; l < layer_stage.size(); ++l) {
      if (layer_stage[l] == stage) ranges.emplace_back(static_cast<int>(l), static_cast<int>(l) + 1);
    }
    for (int block = 0; block < traffic.blocks; ++block) {
      const int64_t per_call = domain_gather_bytes(cfg, layout, block, ranges, params,
                                                   rows_per_call(cfg, data_parallel), cfg.pipeline.microbatches);
      const int64_t to_each = per_call / (traffic.blocks - 1) * cfg.optimizer.accumulate;
      if (to_each > 0) traffic.gathers.push_back({stage, block, to_each});
    }
  }
}

// With a domain split: the halos each stage's blocks exchange over a step (the even split `sluice train` uses),
// and each boundary's activation cut into the blocks that carry it.
void add_domain_traffic(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                        const std::vector<int>& layer_stage, int data_parallel, config::StepTraffic& traffic) {
  const int64_t rows = rows_per_step(cfg, data_parallel);
  const config::SampleShape input = config::input_shape_of(cfg.model);
  const std::vector<int64_t> global(input.begin() + 1, input.end());
  const config::DomainLayout layout = config::even_domain_layout(global, cfg.pipeline.domain, cfg.pipeline.domain_tile);
  config::domain_layer_costs(cfg.model.layers, input, layout);  // refuses what the model cannot run on the blocks
  const std::vector<config::SplitLayer> layers = config::split_layers(cfg.model.layers, input);
  traffic.blocks = static_cast<int>(layout.block_count());
  for (size_t l = 0; l < layers.size(); ++l) {
    for (int from = 0; from < traffic.blocks; ++from) {
      for (const config::HaloPass pass : {config::HaloPass::kForward, config::HaloPass::kBackward}) {
        if (pass == config::HaloPass::kBackward && l == 0) continue;  // layer 0 computes no input gradient
        // what halo_fill sends on each link (as the start report counts it), corners relayed via the neighbours
        for (const config::HaloLink& link : config::halo_send_links(layers[l], layout, from, pass)) {
          traffic.halos.push_back({layer_stage[l], from, static_cast<int>(link.to), rows * link.bytes_per_sample});
        }
      }
    }
  }
  const int64_t points = config::field_points(input);
  std::vector<config::StepTraffic::Boundary> per_block;
  for (const config::StepTraffic::Boundary& b : traffic.boundaries) {
    for (int block = 0; block < traffic.blocks; ++block) {
      const config::DomainBox box = layout.box(block);
      int64_t block_points = 1;
      for (int64_t e : box.extent) block_points *= e;
      // the block's share of the field, the same at every resolution (its cuts are whole at every layer)
      // (in floating point: bytes x points could pass 64 bits, and a lower level need not divide by the points)
      const double share = static_cast<double>(block_points) / static_cast<double>(points);
      per_block.push_back({b.from_stage, b.to_stage, std::llround(static_cast<double>(b.bytes) * share), block});
    }
  }
  traffic.boundaries = per_block;
  add_tile_gathers(cfg, shapes, layer_stage, layout, data_parallel, traffic);
}

}  // namespace

config::StepTraffic step_traffic(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                                 const std::vector<int>& split, const std::vector<int>& stage_to_rank,
                                 int data_parallel) {
  const std::vector<model::LayerRange> ranges = model::split_to_ranges(split);
  const int64_t rows = rows_per_step(cfg, data_parallel);
  config::StepTraffic traffic;
  traffic.gradient_floats.resize(cfg.pipeline.stages);
  std::vector<int> layer_stage(shapes.size(), 0);
  // What crosses each boundary: the main tensor and the carried skips; a routed skip goes straight from its
  // sender's rank to its reader's, once (model/stage_widths.h).
  const model::SkipRoutes routes = model::skip_routes_of(cfg.model, shapes, ranges);
  const std::vector<int64_t> widths = model::activation_widths(shapes, ranges, routes);
  for (size_t chunk = 0; chunk < ranges.size(); ++chunk) {
    int64_t params = 0;
    for (int l = ranges[chunk].first; l < ranges[chunk].last; ++l) {
      params += shapes[l].params;
      layer_stage[l] = stage_to_rank.at(chunk);
    }
    traffic.gradient_floats.at(stage_to_rank.at(chunk)).push_back(params);
    if (chunk + 1 == ranges.size() || stage_to_rank[chunk] == stage_to_rank[chunk + 1]) continue;
    // the activation forward and its gradient backward, 4-byte floats
    traffic.boundaries.push_back({stage_to_rank[chunk], stage_to_rank[chunk + 1], 2 * rows * widths[chunk] * 4});
  }
  for (const model::SkipRoute& route : routes.routes) {
    const int from = stage_to_rank.at(route.from), to = stage_to_rank.at(route.to);
    if (from != to) traffic.boundaries.push_back({from, to, 2 * rows * route.features * 4});
  }
  if (config::domain_block_count(cfg.pipeline.domain) > 1) {
    add_domain_traffic(cfg, shapes, layer_stage, data_parallel, traffic);
  }
  return traffic;
}

config::RankOrderChoice agree_rank_order(
    MPI_Comm world, config::RankOrder requested,
    const std::function<config::RankOrderChoice(const std::vector<int>& node_of_rank)>& decide) {
  const comm::DuplicateComm dup(world, "rank order");
  const std::vector<int> nodes = node_of_each_rank(dup.get());
  const comm::Decision decision = comm::rank_zero_decides(dup.get(), "rank order", [&] {
    config::RankOrderChoice choice;
    choice.order = requested == config::RankOrder::kAuto ? config::RankOrder::kStagesWithinNode : requested;
    try {
      choice = decide(nodes);
    } catch (...) {
      // The build after this reports the same problem, agreed across ranks; keep the default here.
    }
    comm::Decision d;
    d.numbers = {static_cast<int64_t>(choice.order), choice.nodes, choice.blocks};
    for (const auto& [order, bytes] : choice.compared) {
      d.numbers.push_back(static_cast<int64_t>(order));
      d.numbers.push_back(bytes);
    }
    return d;
  });
  const std::vector<int64_t>& wire = decision.numbers;
  if (wire.size() < 3 || wire.size() % 2 != 1) {
    throw Error(ErrorCode::kInternal, "rank order: malformed decision from rank 0");
  }
  config::RankOrderChoice choice;
  choice.order = static_cast<config::RankOrder>(wire[0]);
  choice.nodes = static_cast<int>(wire[1]);
  choice.blocks = static_cast<int>(wire[2]);
  for (size_t i = 3; i < wire.size(); i += 2) {
    choice.compared.emplace_back(static_cast<config::RankOrder>(wire[i]), wire[i + 1]);
  }
  choice.node_of_rank = nodes;  // gathered by every rank: the same everywhere
  return choice;
}

namespace {

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g MB", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

std::string describe(const config::RankOrderChoice& choice, config::RankOrder requested) {
  // stages_across_nodes first, then the rest in the tie order (the order reports have always listed the two in).
  std::vector<std::pair<config::RankOrder, int64_t>> listed;
  for (const auto& entry : choice.compared) {
    if (entry.first == config::RankOrder::kStagesAcrossNodes) listed.insert(listed.begin(), entry);
    else listed.push_back(entry);
  }
  std::string options, payload;
  for (size_t i = 0; i < listed.size(); ++i) {
    options += (i ? ", " : "") + config::rank_order_name(listed[i].first) + " " + megabytes(listed[i].second);
    payload += (i == 0 ? "" : i + 1 == listed.size() ? " and " : ", ") + std::to_string(listed[i].second);
  }
  std::string line = "rank order " + config::rank_order_name(choice.order) + " (" +
                     (requested == config::RankOrder::kAuto ? "auto" : "set in the config") + ", " +
                     std::to_string(choice.nodes) + " node(s)); inter-node bytes per optimizer step: " + options +
                     " (" + payload + " bytes of MPI payload)";
  // The old names do not say where a split's blocks go: spell the nesting out with a split.
  if (choice.blocks > 1) {
    line += "; world ranks run through " + config::rank_nesting_text(choice.order) + " (innermost first)";
  }
  return line;
}

}  // namespace sluice::runtime
