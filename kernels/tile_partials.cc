#include "kernels/tile_partials.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "add_tile_partials: " + problem);
}

// by_tile[t] = the partial of global tile t; every tile exactly once.
std::vector<const TilePartial*> in_tile_order(const std::vector<TilePartial>& partials, int64_t global_tiles) {
  std::vector<const TilePartial*> by_tile(static_cast<size_t>(global_tiles), nullptr);
  for (const TilePartial& partial : partials) {
    if (partial.tile < 0 || partial.tile >= global_tiles) {
      fail("tile " + std::to_string(partial.tile) + " is outside the field's " + std::to_string(global_tiles) +
           " tiles");
    }
    const TilePartial*& slot = by_tile[static_cast<size_t>(partial.tile)];
    if (slot != nullptr) fail("tile " + std::to_string(partial.tile) + " has two partials");
    slot = &partial;
  }
  for (int64_t t = 0; t < global_tiles; ++t) {
    if (by_tile[static_cast<size_t>(t)] == nullptr) {
      fail("tile " + std::to_string(t) + " has no partial (" + std::to_string(partials.size()) + " partials for " +
           std::to_string(global_tiles) + " tiles)");
    }
  }
  return by_tile;
}

}  // namespace

void add_tile_partials(Backend& backend, const std::vector<TilePartial>& partials, int64_t global_tiles,
                       Tensor& weight_grad, Tensor* bias_grad) {
  // axpy with alpha 1 rounds as a plain add (1·p is exact), so each step is grad + p rounded once.
  for (const TilePartial* partial : in_tile_order(partials, global_tiles)) {
    backend.axpy(1.0f, partial->weight_grad, weight_grad);
    if (bias_grad != nullptr) {
      if (partial->bias_grad.empty()) fail("tile " + std::to_string(partial->tile) + " has no bias partial");
      backend.axpy(1.0f, partial->bias_grad, *bias_grad);
    }
  }
}

}  // namespace sluice::kernels
