#include "core/runtime/trainer_domain.h"

#include <cstddef>
#include <vector>

#include "core/comm/halo_layout.h"
#include "core/common/error.h"
#include "core/config/halo_stash.h"
#include "kernels/tile_grid.h"

namespace sluice::runtime {

bool runs_on_domain(const config::Config& cfg) {
  if (cfg.pipeline.domain.empty() || cfg.loss == model::LossKind::kCustom) return false;
  for (int stage = 0; stage < cfg.pipeline.stages; ++stage) {
    if (cfg.device_for_stage(stage) != config::DeviceKind::kCpu) return false;
  }
  const std::vector<config::SplitLayer> walked =
      config::split_layers(cfg.model.layers, config::input_shape_of(cfg.model));
  return walked.empty() || walked.back().problem.empty();
}

config::DomainLayout domain_layout_for(const config::Config& cfg, const std::optional<config::DomainLayout>& declared) {
  const config::SampleShape input = config::input_shape_of(cfg.model);
  const std::vector<int64_t> global(input.begin() + 1, input.end());
  config::DomainLayout layout =
      declared ? *declared : config::even_domain_layout(global, cfg.pipeline.domain, cfg.pipeline.domain_tile);
  config::domain_layer_costs(cfg.model.layers, input, layout);  // refuses a block a layer cannot run on
  return layout;
}

std::unique_ptr<RunDomain> make_run_domain(const config::DomainLayout& layout, MPI_Comm domain_comm, int block) {
  auto run = std::make_unique<RunDomain>();
  run->layout = layout;
  run->block = block;
  run->channel = std::make_unique<comm::HaloChannel>(domain_comm);
  run->gather = std::make_unique<comm::TileGather>(*run->channel);
  comm::HaloGrid grid;
  for (const std::vector<int64_t>& cuts : layout.cuts) {  // boundaries 0 .. global -> every block's extent
    std::vector<int64_t> extents;
    for (size_t i = 1; i < cuts.size(); ++i) extents.push_back(cuts[i] - cuts[i - 1]);
    grid.block_extents.push_back(extents);
  }
  grid.halo_low.assign(layout.cuts.size(), 0);  // each op sets its own widths
  grid.halo_high.assign(layout.cuts.size(), 0);
  const comm::HaloBlock halo = comm::halo_block_of(grid, 1, 1, block, run->channel->size());
  const config::DomainBox box = layout.box(block);
  run->field = std::make_unique<DomainField>(*run->channel, *run->gather, halo,
                                             kernels::TileGrid{layout.global, layout.tile, box.offset, box.extent});
  run->domain = std::make_unique<BlockDomain>(*run->field);
  return run;
}

config::ModelSpec block_model(const config::ModelSpec& spec, const config::DomainBox& box) {
  config::ModelSpec block = spec;
  const config::SampleShape whole = config::input_shape_of(spec);
  block.input_shape = {whole.front()};
  block.inputs = whole.front();
  for (const int64_t extent : box.extent) {
    block.input_shape.push_back(extent);
    block.inputs *= extent;
  }
  return block;
}

namespace {

// The largest block of the even split (the first of equal ones): the block the planners size a rank from.
config::DomainBox largest_block(const config::Config& cfg) {
  const config::DomainLayout layout = domain_layout_for(cfg, std::nullopt);
  int64_t largest = 0;
  int64_t largest_points = -1;
  for (int64_t block = 0; block < layout.block_count(); ++block) {
    int64_t points = 1;
    for (int64_t extent : layout.box(block).extent) points *= extent;
    if (points > largest_points) largest = block, largest_points = points;
  }
  return layout.box(largest);
}

}  // namespace

config::ModelSpec rank_model(const config::Config& cfg) {
  if (!runs_on_domain(cfg)) return cfg.model;
  return block_model(cfg.model, largest_block(cfg));
}

std::vector<double> rank_halo_stash(const config::Config& cfg) {
  if (cfg.pipeline.recompute_halos != config::RecomputeHalos::kStash || !runs_on_domain(cfg)) {
    return std::vector<double>(cfg.model.layers.size(), 0.0);
  }
  return config::halo_input_bytes(cfg.model.layers, config::input_shape_of(cfg.model), largest_block(cfg));
}

}  // namespace sluice::runtime
