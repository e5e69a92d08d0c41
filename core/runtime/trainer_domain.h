// The trainer's domain-parallel part (issue 32, docs/DOMAIN.md): this rank's block of every sample as the model's
// layers see it (a runtime::BlockDomain over a DomainField over the domain group's halo channel and tile gather),
// made once at start and kept in RunParts for as long as the stages built on it.
//
// A run is on a domain when `pipeline.domain` is given and every layer can run on a block; with one block it is
// the same tiled code on the whole field (halos are local copies, the gather a copy), the run every split of the
// model reproduces bit for bit. Without `pipeline.domain` the plain layers run as before.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <vector>

#include "core/comm/halo_exchange.h"
#include "core/comm/tile_gather.h"
#include "core/config/config.h"
#include "core/config/domain_layout.h"
#include "core/runtime/block_domain.h"
#include "core/runtime/domain_field.h"

namespace sluice::runtime {

// Members in construction order: the domain (whose levels the layers reference) is destroyed first.
struct RunDomain {
  config::DomainLayout layout;  // the whole split
  int block = 0;                // this rank's block (row-major over layout.blocks)
  std::unique_ptr<comm::HaloChannel> channel;
  std::unique_ptr<comm::TileGather> gather;
  std::unique_ptr<DomainField> field;
  std::unique_ptr<BlockDomain> domain;  // the model input's level, passed to build_layers for every stage

  config::DomainBox box() const { return layout.box(block); }
};

// Whether `cfg` runs on a domain: pipeline.domain is given (even all 1), every layer can run on a block
// (config::split_layers), the loss is not custom and every stage is on the cpu. A config that fails one of these and
// is not split keeps the plain layers; a split one is refused before (refuse_unbuilt_domain_split, the parser).
bool runs_on_domain(const config::Config& cfg);

// The block layout the trainer runs: `declared` when the host declared one before start, else the even split of
// the model input's field into pipeline.domain blocks with pipeline.domain_tile. The one place the runtime takes
// its layout from. Error(kConfig) naming the layer when a block cannot run it (config::domain_layer_costs).
config::DomainLayout domain_layout_for(const config::Config& cfg, const std::optional<config::DomainLayout>& declared);

// Collective over `domain_comm` (its ranks are the blocks, by block number; MPI_COMM_SELF with one block): the
// channel, gather, field and domain of block `block` of `layout`.
std::unique_ptr<RunDomain> make_run_domain(const config::DomainLayout& layout, MPI_Comm domain_comm, int block);

// `spec` with its input cut to the block `box` ([C, box extents]): its model_shape gives every layer's widths on
// the block (the partition still weighs the whole field's).
config::ModelSpec block_model(const config::ModelSpec& spec, const config::DomainBox& box);

// What one rank's layers see: block_model of the largest block of the even split when cfg runs on a domain (a
// declared layout is not known before start), else cfg.model. The planners size a rank's activations from it.
config::ModelSpec rank_model(const config::Config& cfg);

// Per layer, the bytes per sample `pipeline.recompute_halos: stash` keeps for it while a recompute has dropped it:
// its halo-filled input on rank_model's block (config::halo_input_bytes); all 0 under `exchange` or without a
// domain. The planners (sluice plan, schedule auto) add it for the layers their recompute policy drops, as the
// stage's Stash::halo_inputs holds it.
std::vector<double> rank_halo_stash(const config::Config& cfg);

}  // namespace sluice::runtime
