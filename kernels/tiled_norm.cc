#include "kernels/tiled_norm.h"

#include <cmath>
#include <initializer_list>
#include <string>

#include "core/common/error.h"
#include "kernels/field_box.h"

namespace sluice::kernels {
namespace {

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "tiled group norm: " + problem);
}

void require_block(const char* operand, const Tensor& tensor, int64_t rows, int64_t cols) {
  if (tensor.rows() != rows || tensor.cols() != cols) {
    fail(std::string(operand) + " is [" + std::to_string(tensor.rows()) + "][" + std::to_string(tensor.cols()) +
         "], expected [" + std::to_string(rows) + "][" + std::to_string(cols) +
         "] (channels times the block's points)");
  }
}

NormGeometry with_points(const TiledGroupNorm& t, int64_t points) {
  NormGeometry g = t.norm;
  g.points = points;
  return g;
}

// Elements of a group within one tile (n_t) and within the field (N).
double tile_count(const TiledGroupNorm& t) {
  return static_cast<double>(t.norm.channels / t.norm.groups * t.grid.tile_points());
}
double field_count(const TiledGroupNorm& t) {
  return static_cast<double>(t.norm.channels / t.norm.groups * t.norm.points);
}

void require_all(const TiledGroupNorm& t, int64_t samples, const std::vector<double>& all) {
  const int64_t want = t.grid.global_tiles() * group_norm_sums_per_tile(t, samples);
  if (static_cast<int64_t>(all.size()) != want) {
    fail("the gathered sums hold " + std::to_string(all.size()) + " values, expected " + std::to_string(want) + " (" +
         std::to_string(t.grid.global_tiles()) + " tiles of " + std::to_string(samples) + " samples x " +
         std::to_string(t.norm.groups) + " groups x 2)");
  }
}

// Calls visit(local, tile tensors...) with each tile of the block cut out of `blocks` (x, dy: same channels).
template <typename Visit>
void for_each_tile(Backend& backend, const TiledGroupNorm& t, std::initializer_list<const Tensor*> blocks,
                   Visit&& visit) {
  const int64_t samples = (*blocks.begin())->rows(), channels = t.norm.channels;
  std::vector<Tensor> tiles;
  for (const Tensor* block : blocks) {
    require_block("a block operand", *block, samples, channels * t.grid.block_points());
    tiles.push_back(backend.empty(samples, channels * t.grid.tile_points()));
  }
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    const FieldBox box = box_out_of(channels, t.grid.block_extent, t.grid.tile_origin(local), t.grid.tile);
    size_t i = 0;
    for (const Tensor* block : blocks) copy_field_box(backend, box, *block, tiles[i++]);
    visit(local, tiles);
  }
}

}  // namespace

void check_tiled_group_norm(const TiledGroupNorm& tiled) {
  check_tile_grid(tiled.grid);
  try {
    check_norm_geometry(tiled.norm);
  } catch (const Error& e) {
    fail(e.what());
  }
  if (tiled.norm.points != extent_product(tiled.grid.global)) {
    fail("the norm's " + std::to_string(tiled.norm.points) + " points are not the field's " +
         std::to_string(extent_product(tiled.grid.global)) + " (the grid's global extents)");
  }
}

int64_t group_norm_sums_per_tile(const TiledGroupNorm& tiled, int64_t samples) {
  return samples * tiled.norm.groups * 2;
}

std::vector<int64_t> block_tile_indices(const TileGrid& grid) {
  std::vector<int64_t> tiles;
  for (int64_t local = 0; local < grid.block_tiles(); ++local) tiles.push_back(grid.global_index(local));
  return tiles;
}

std::vector<double> tiled_group_norm_sums(Backend& backend, const TiledGroupNorm& tiled, const Tensor& x) {
  check_tiled_group_norm(tiled);
  const NormGeometry tile = with_points(tiled, tiled.grid.tile_points());
  std::vector<double> sums;
  for_each_tile(backend, tiled, {&x}, [&](int64_t, const std::vector<Tensor>& tiles) {
    const std::vector<double> mine = backend.group_norm_partial_sums(tile, tiles[0]);
    sums.insert(sums.end(), mine.begin(), mine.end());
  });
  return sums;
}

GroupNormStatistics group_norm_statistics(Backend& backend, const TiledGroupNorm& tiled, int64_t samples,
                                          const std::vector<double>& all) {
  check_tiled_group_norm(tiled);
  require_all(tiled, samples, all);
  const int64_t sets = samples * tiled.norm.groups, per_tile = 2 * sets;
  const double n_tile = tile_count(tiled), n_field = field_count(tiled);
  std::vector<float> mean(static_cast<size_t>(sets)), rstd(static_cast<size_t>(sets));
  for (int64_t s = 0; s < sets; ++s) {
    double sum = 0.0;
    for (int64_t t = 0; t < tiled.grid.global_tiles(); ++t) sum += all[static_cast<size_t>(t * per_tile + 2 * s)];
    const double mu = sum / n_field;
    double squares = 0.0;
    for (int64_t t = 0; t < tiled.grid.global_tiles(); ++t) {
      const double tile_sum = all[static_cast<size_t>(t * per_tile + 2 * s)];
      const double between = tile_sum / n_tile - mu;
      squares += all[static_cast<size_t>(t * per_tile + 2 * s + 1)] + n_tile * (between * between);
    }
    mean[static_cast<size_t>(s)] = static_cast<float>(mu);
    rstd[static_cast<size_t>(s)] = static_cast<float>(1.0 / std::sqrt(squares / n_field + tiled.norm.eps));
  }
  return {backend.from_host(samples, tiled.norm.groups, mean.data()),
          backend.from_host(samples, tiled.norm.groups, rstd.data())};
}

void tiled_group_norm_forward(Backend& backend, const TiledGroupNorm& tiled, const Tensor& x, const Tensor& weight,
                              const Tensor& bias, const GroupNormStatistics& stats, Tensor& y) {
  check_tiled_group_norm(tiled);
  backend.group_norm_normalize(with_points(tiled, tiled.grid.block_points()), x, weight, bias, stats.mean,
                               stats.rstd, y);
}

std::vector<double> tiled_group_norm_backward_sums(Backend& backend, const TiledGroupNorm& tiled, const Tensor& dy,
                                                   const Tensor& x, const Tensor& weight,
                                                   const GroupNormStatistics& stats) {
  check_tiled_group_norm(tiled);
  const NormGeometry tile = with_points(tiled, tiled.grid.tile_points());
  std::vector<double> sums;
  for_each_tile(backend, tiled, {&dy, &x}, [&](int64_t, const std::vector<Tensor>& tiles) {
    const std::vector<double> mine =
        backend.group_norm_backward_partial_sums(tile, tiles[0], tiles[1], weight, stats.mean, stats.rstd);
    sums.insert(sums.end(), mine.begin(), mine.end());
  });
  return sums;
}

void tiled_group_norm_backward_data(Backend& backend, const TiledGroupNorm& tiled, const Tensor& dy, const Tensor& x,
                                    const Tensor& weight, const GroupNormStatistics& stats,
                                    const std::vector<double>& all, Tensor& dx) {
  check_tiled_group_norm(tiled);
  const int64_t samples = x.rows();
  require_all(tiled, samples, all);
  const int64_t sets = samples * tiled.norm.groups, per_tile = 2 * sets;
  const double n_field = field_count(tiled);
  std::vector<float> mean_g(static_cast<size_t>(sets)), mean_g_xhat(static_cast<size_t>(sets));
  for (int64_t s = 0; s < sets; ++s) {
    double sum_g = 0.0, sum_g_xhat = 0.0;
    for (int64_t t = 0; t < tiled.grid.global_tiles(); ++t) {
      sum_g += all[static_cast<size_t>(t * per_tile + 2 * s)];
      sum_g_xhat += all[static_cast<size_t>(t * per_tile + 2 * s + 1)];
    }
    mean_g[static_cast<size_t>(s)] = static_cast<float>(sum_g / n_field);
    mean_g_xhat[static_cast<size_t>(s)] = static_cast<float>(sum_g_xhat / n_field);
  }
  const Tensor g = backend.from_host(samples, tiled.norm.groups, mean_g.data());
  const Tensor gx = backend.from_host(samples, tiled.norm.groups, mean_g_xhat.data());
  backend.group_norm_backward_with_sums(with_points(tiled, tiled.grid.block_points()), dy, x, weight, stats.mean,
                                        stats.rstd, g, gx, dx);
}

std::vector<TilePartial> tiled_group_norm_param_grad_partials(Backend& backend, const TiledGroupNorm& tiled,
                                                              const Tensor& dy, const Tensor& x,
                                                              const GroupNormStatistics& stats) {
  check_tiled_group_norm(tiled);
  const NormGeometry tile = with_points(tiled, tiled.grid.tile_points());
  std::vector<TilePartial> partials;
  for_each_tile(backend, tiled, {&dy, &x}, [&](int64_t local, const std::vector<Tensor>& tiles) {
    TilePartial p{tiled.grid.global_index(local), backend.zeros(1, tiled.norm.channels),
                  backend.zeros(1, tiled.norm.channels)};
    backend.group_norm_accumulate_param_grads(tile, tiles[0], tiles[1], stats.mean, stats.rstd, p.weight_grad,
                                              p.bias_grad);
    partials.push_back(std::move(p));
  });
  return partials;
}

std::vector<TilePartial> tiled_channel_layernorm_param_grad_partials(Backend& backend, const TiledGroupNorm& tiled,
                                                                     const Tensor& dy, const Tensor& x,
                                                                     const Tensor& mean, const Tensor& rstd) {
  check_tiled_group_norm(tiled);
  const int64_t samples = x.rows();
  require_block("mean", mean, samples, tiled.grid.block_points());
  require_block("rstd", rstd, samples, tiled.grid.block_points());
  const NormGeometry tile = with_points(tiled, tiled.grid.tile_points());
  Tensor tile_mean = backend.empty(samples, tile.points);
  Tensor tile_rstd = backend.empty(samples, tile.points);
  std::vector<TilePartial> partials;
  for_each_tile(backend, tiled, {&dy, &x}, [&](int64_t local, const std::vector<Tensor>& tiles) {
    const FieldBox box = box_out_of(1, tiled.grid.block_extent, tiled.grid.tile_origin(local), tiled.grid.tile);
    copy_field_box(backend, box, mean, tile_mean);
    copy_field_box(backend, box, rstd, tile_rstd);
    TilePartial p{tiled.grid.global_index(local), backend.zeros(1, tiled.norm.channels),
                  backend.zeros(1, tiled.norm.channels)};
    backend.channel_layernorm_accumulate_param_grads(tile, tiles[0], tiles[1], tile_mean, tile_rstd, p.weight_grad,
                                                     p.bias_grad);
    partials.push_back(std::move(p));
  });
  return partials;
}

}  // namespace sluice::kernels
