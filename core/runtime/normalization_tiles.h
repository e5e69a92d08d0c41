// Per-channel normalization statistics of a field side on a domain (issue 32 item 3, docs/DOMAIN.md "Tiles and
// exact reductions"): formed per canonical tile of the global field, so a split run and the undecomposed
// `pipeline.domain: [1, .., 1]` run compute the same bits. The trainer gathers the partials of every sample and tile
// over the world and adds them here in one fixed order (trainer_normalization.cc).
//
// Order of additions (independent of the split, of the replica count and of the stage count):
//   a partial P[r][t][c] is the double sum over tile t's points of channel c of sample r, in the tile's row-major
//   point order; a channel's total is Σ over samples r (in global sample order) of Σ over tiles t (in global tile
//   order) of P[r][t][c]. The std's squares (x − mean)² are added the same way, with mean = total / (n · points).
// Cost: the partials are samples × global tiles × channels doubles, and the world's ordered double sum gathers them
// from every rank (core/comm/collectives.h), twice, once per training run: coarse tiles keep it small.
// The plain run (no pipeline.domain) keeps statistics_of's sample-then-point order (normalization.h): its bits may
// differ in the last place from a domain run's; a checkpoint carries either as [C].
#pragma once

#include <cstdint>
#include <vector>

#include "core/runtime/normalization.h"
#include "kernels/tile_grid.h"

namespace sluice::runtime {

// Writes the partials of `rows` samples of one block ([rows][channels · Π grid.block_extent], C order) into
// out[(r · global_tiles + t) · channels + c] for the block's tiles t (other entries untouched). With `mean` (one per
// channel) the partials are of (x − mean[c])², else of x.
void add_tile_partials(const float* block, int64_t rows, int64_t channels, const kernels::TileGrid& grid,
                       const double* mean, double* out);

// The channel totals of partials [rows][global_tiles][channels] in the order above.
std::vector<double> channel_totals(const std::vector<double>& partials, int64_t rows, int64_t global_tiles,
                                   int64_t channels);

// The statistics from the channel totals of x and of (x − mean)² over `count` values per channel; `points`: the
// block's points per channel (what the scaling applies to on this rank).
FeatureScaling tiled_scaling(const std::vector<double>& sums, const std::vector<double>& squares, double count,
                             int64_t points);

}  // namespace sluice::runtime
