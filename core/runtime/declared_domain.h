// The block layout a host declares (sluice_trainer_set_domain; docs/DOMAIN.md, "The host's layout"): every rank
// names the field's spatial extents and the box of it that it holds; at start the boxes are gathered and must cut
// the field into the product grid of `pipeline.domain`, each rank holding the block the trainer's layout gives it
// (config::Layout::block), every block one the model's layers can run on (config::domain_layer_costs).
//
// The rule for which rank holds which block is the layout's, not the host's: a host declares the box the layout
// places on the rank (block = its place in its stage's group of consecutive ranks, row-major over the grid), and a
// rank that declared another box is refused, naming the block it declared and the one it must. Mapping the blocks
// onto the ranks that declared them would move the ranks of a stage's halo group apart and need a second
// placement rule; a solver lays out its ranks itself, so it can declare in the layout's order.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/config/domain_layout.h"

namespace sluice::runtime {

// What one rank declares: the field's spatial extents (model.inputs without the channels) and its block, at the
// input resolution, C order (the last dimension fastest), offsets 0-based.
struct DeclaredDomain {
  std::vector<int64_t> global;
  config::DomainBox box;
};

// One rank's part of the gathered declarations.
struct RankDeclaration {
  int block = 0;                           // the block the trainer's layout gives the rank (config::Layout::block)
  std::optional<DeclaredDomain> declared;  // none: the rank declared nothing
};

// Local. Why `declared` cannot be a block of this model's input (a model on rows; dimensions, extents, an offset or
// extent out of range), "" when it can. Messages name the C API's arguments (ndims, global_extent, block_offset,
// block_extent) and the dimension.
std::string declared_domain_problem(const config::Config& cfg, const DeclaredDomain& declared);

// Pure: the layout of every rank's declaration (`ranks` indexed by world rank); none when no rank declared. Throws
// Error(kInvalidArgument) naming the rank(s) when some ranks declared and others did not, a declaration that is not
// a block of the model's input (declared_domain_problem), boxes that overlap, leave points out or do not form a
// product grid, more declared blocks than the trainer has ranks or a grid other than pipeline.domain's (both
// counts named), and a rank whose box is not the block the layout gives it; Error(kConfig) from
// config::domain_layer_costs naming the layer whose downsampling a block's offset or extent is not a multiple of
// (or pipeline.domain_tile when a block is not whole tiles). The same input gives the same error on every rank.
std::optional<config::DomainLayout> layout_of_declarations(const config::Config& cfg,
                                                           const std::vector<RankDeclaration>& ranks);

// Collective over `world` (every rank of the trainer's communicator, declared or not): gathers every rank's
// `layout_block` (config::Layout::block) and declaration (one bounded all-gather, core/comm) and returns
// layout_of_declarations of them. Every rank computes the verdict from the same gathered values, so every rank
// returns the same layout or throws the same error.
std::optional<config::DomainLayout> gather_declared_domain(MPI_Comm world, const config::Config& cfg,
                                                           int layout_block,
                                                           const std::optional<DeclaredDomain>& mine);

}  // namespace sluice::runtime
