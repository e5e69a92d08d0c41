#include "kernels/tiled_loss.h"

#include <string>

#include "core/common/error.h"
#include "kernels/field_box.h"

namespace sluice::kernels {
namespace {

[[noreturn]] void fail(const std::string& problem) { throw Error(ErrorCode::kInvalidArgument, problem); }

void require_block(const char* operand, const Tensor& tensor, int64_t rows, int64_t cols) {
  if (tensor.rows() != rows || tensor.cols() != cols) {
    fail(std::string("tiled field loss: ") + operand + " is [" + std::to_string(tensor.rows()) + "][" +
         std::to_string(tensor.cols()) + "], expected [" + std::to_string(rows) + "][" + std::to_string(cols) +
         "] (channels times the block's points)");
  }
}

}  // namespace

std::vector<TileLoss> tiled_field_loss(Backend& backend, FieldLoss loss, const TileGrid& grid, int64_t channels,
                                       const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad) {
  check_tile_grid(grid);
  const int64_t samples = pred.rows(), block_cols = channels * grid.block_points();
  require_block("pred", pred, samples, block_cols);
  require_block("target", target, samples, block_cols);
  require_block("grad", grad, samples, block_cols);
  const int64_t tile_cols = channels * grid.tile_points();
  Tensor tile_pred = backend.empty(samples, tile_cols), tile_target = backend.empty(samples, tile_cols);
  Tensor tile_grad = backend.empty(samples, tile_cols);
  std::vector<TileLoss> sums;
  for (int64_t local = 0; local < grid.block_tiles(); ++local) {
    const std::vector<int64_t> origin = grid.tile_origin(local);
    copy_field_box(backend, box_out_of(channels, grid.block_extent, origin, grid.tile), pred, tile_pred);
    copy_field_box(backend, box_out_of(channels, grid.block_extent, origin, grid.tile), target, tile_target);
    const double value =
        loss == FieldLoss::kMse
            ? backend.mse(tile_pred, tile_target, grad_scale, tile_grad)
            : backend.channel_softmax_cross_entropy(channels, tile_pred, tile_target, grad_scale, tile_grad);
    copy_field_box(backend, box_into(channels, grid.block_extent, origin, grid.tile), tile_grad, grad);
    sums.push_back({grid.global_index(local), value});
  }
  return sums;
}

double sum_tile_losses(const std::vector<TileLoss>& tiles, int64_t global_tiles) {
  std::vector<const TileLoss*> by_tile(static_cast<size_t>(global_tiles > 0 ? global_tiles : 0), nullptr);
  for (const TileLoss& t : tiles) {
    if (t.tile < 0 || t.tile >= global_tiles) {
      fail("sum_tile_losses: tile " + std::to_string(t.tile) + " is outside the field's " +
           std::to_string(global_tiles) + " tiles");
    }
    if (by_tile[static_cast<size_t>(t.tile)] != nullptr) {
      fail("sum_tile_losses: tile " + std::to_string(t.tile) + " has two sums");
    }
    by_tile[static_cast<size_t>(t.tile)] = &t;
  }
  double total = 0.0;
  for (int64_t i = 0; i < global_tiles; ++i) {
    const TileLoss* t = by_tile[static_cast<size_t>(i)];
    if (t == nullptr) fail("sum_tile_losses: tile " + std::to_string(i) + " has no sum");
    total += t->value;
  }
  return total;
}

}  // namespace sluice::kernels
