// Trainer's side of normalization (normalization.h): auto statistics from the first training call, and the
// normalized copies of a call's arrays that the executor reads instead of the caller's.
#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/runtime/normalization_tiles.h"
#include "core/runtime/trainer.h"
#include "kernels/tile_grid.h"

namespace sluice::runtime {

namespace {

// The canonical tiling of a field side of a domain run: the model input's level, or the level the output's extents
// are at (a down- or up-sampling factor from the input's block).
kernels::TileGrid side_grid(const DomainField& field, const std::vector<int64_t>& shape) {
  const kernels::TileGrid& input = field.grid();
  if (shape.size() != input.dims() + 1) {
    throw Error(ErrorCode::kUnsupported, "normalization on a domain split: the model output is not a field of the "
                                         "input's dimensions; normalize only inputs or give the statistics");
  }
  std::vector<int64_t> down(input.dims(), 1), up(input.dims(), 1);
  bool coarser = false, finer = false;
  for (size_t d = 0; d < input.dims(); ++d) {
    const int64_t in = input.block_extent[d], out = shape[d + 1];
    if (in == out) continue;
    if (out < in && in % out == 0) {
      down[d] = in / out, coarser = true;
    } else if (out > in && out % in == 0) {
      up[d] = out / in, finer = true;
    } else {
      throw Error(ErrorCode::kUnsupported, "normalization on a domain split: the output block's extent " +
                                               std::to_string(out) + " is no whole factor of the input's " +
                                               std::to_string(in) + " (dimension " + std::to_string(d) + ")");
    }
  }
  if (coarser && finer) throw Error(ErrorCode::kUnsupported, "normalization on a domain split: mixed output level");
  if (coarser) return field.coarsened(down).grid();
  if (finer) return field.refined(up).grid();
  return input;
}

}  // namespace

void Trainer::compute_auto_normalization(const float* inputs, const float* targets, int64_t rows) {
  // The first n samples of the call's global batch (replica-major: replica r holds samples [r*rows, (r+1)*rows)).
  const int64_t global = rows * layout().data_parallel;
  const int64_t n = std::min<int64_t>(normalization_.spec().samples, global);
  const int64_t first = static_cast<int64_t>(layout().replica) * rows;
  const int64_t mine = std::clamp<int64_t>(n - first, 0, rows);
  // Every sample slot is written by exactly one rank (its replica's first- or last-stage rank) and is 0 elsewhere,
  // so the ordered sum over the world is exact: every rank ends with the same samples in global order, whatever
  // the layout, and computes the same statistics as one process holding the whole batch would.
  auto gathered = [&](const float* data, bool holds, int64_t features, int64_t points) {
    std::vector<float> all(static_cast<size_t>(n * features), 0.0f);
    if (holds && mine > 0) std::copy(data, data + mine * features, all.begin() + first * features);
    parts_.mpi->world_group().start_ordered_sum(all.data(), static_cast<int64_t>(all.size()))->wait();
    return statistics_of(all.data(), n, features, points);
  };
  // On a domain (normalization_tiles.h): each slot [sample][global tile][channel] of the partials is written by
  // exactly one rank (the block holding that tile, of the sample's replica), so the ordered double sum over the
  // world is exact again, and every rank adds the same partials in the same order whatever the split. Two rounds:
  // the sums, then the squares about the mean. No rank holds more than its block of any sample.
  auto tiled = [&](const float* data, bool holds, int64_t features, const std::vector<int64_t>& shape) {
    const kernels::TileGrid grid = side_grid(*parts_.domain->field, shape);
    const int64_t points = grid.block_points(), channels = features / points, tiles = grid.global_tiles();
    const double count = static_cast<double>(n) * static_cast<double>(kernels::extent_product(grid.global));
    auto round = [&](const double* mean) {
      std::vector<double> partials(static_cast<size_t>(n * tiles * channels), 0.0);
      if (holds && mine > 0) add_tile_partials(data, mine, channels, grid, mean, &partials[first * tiles * channels]);
      parts_.mpi->world_group().ordered_sum(partials.data(), static_cast<int64_t>(partials.size()));
      return channel_totals(partials, n, tiles, channels);
    };
    const std::vector<double> sums = round(nullptr);
    std::vector<double> mean(sums.size());
    for (size_t c = 0; c < sums.size(); ++c) mean[c] = sums[c] / count;
    return tiled_scaling(sums, round(mean.data()), count, points);
  };
  auto side = [&](const float* data, bool holds, int64_t features, int64_t points, const std::vector<int64_t>& shape) {
    return parts_.domain ? tiled(data, holds, features, shape) : gathered(data, holds, features, points);
  };
  FeatureScaling input_scaling, target_scaling;
  std::exception_ptr error;
  try {
    if (normalization_.inputs_pending()) {
      input_scaling = side(inputs, parts_.holds_first_stage(), parts_.input_features, normalization_.input_points(),
                           parts_.input_shape);
    }
    if (normalization_.targets_pending()) {
      target_scaling = side(targets, parts_.holds_last_stage(), parts_.output_features,
                            normalization_.output_points(), parts_.output_shape);
    }
  } catch (...) {
    error = std::current_exception();  // a timed-out sum on one rank: every rank fails the call with it
  }
  comm::agree_or_throw(parts_.mpi->world(), "normalization statistics (no update applied)", error);
  normalization_.set_inputs(std::move(input_scaling));
  normalization_.set_targets(std::move(target_scaling));
}

Trainer::NormalizedBatch Trainer::normalized_batch(const float* inputs, const float* targets, int64_t rows) const {
  NormalizedBatch batch;
  if (parts_.holds_first_stage()) batch.inputs = normalized(inputs, rows, normalization_.inputs());
  if (parts_.holds_last_stage()) batch.targets = normalized(targets, rows, normalization_.targets());
  batch.in_ptr = batch.inputs.empty() ? inputs : batch.inputs.data();
  batch.target_ptr = batch.targets.empty() ? targets : batch.targets.data();
  return batch;
}

}  // namespace sluice::runtime
