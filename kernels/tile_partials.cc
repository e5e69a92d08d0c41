#include "kernels/tile_partials.h"

#include <map>
#include <set>
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

void accumulate_tile_partials(Backend& backend, const std::vector<TilePartial>& micro_batch,
                              std::vector<TilePartial>& accumulators) {
  std::map<int64_t, size_t> by_tile;  // indices: pushing a new tile's copy may move the others
  for (size_t i = 0; i < accumulators.size(); ++i) by_tile[accumulators[i].tile] = i;
  std::set<int64_t> seen;
  for (const TilePartial& partial : micro_batch) {
    if (!seen.insert(partial.tile).second) fail("tile " + std::to_string(partial.tile) + " has two partials");
    const auto found = by_tile.find(partial.tile);
    if (found == by_tile.end()) {
      accumulators.push_back(partial);
      continue;
    }
    TilePartial& accumulator = accumulators[found->second];
    if (accumulator.bias_grad.empty() != partial.bias_grad.empty()) {
      fail("tile " + std::to_string(partial.tile) + ": a bias partial on one side only");
    }
    backend.axpy(1.0f, partial.weight_grad, accumulator.weight_grad);
    if (!partial.bias_grad.empty()) backend.axpy(1.0f, partial.bias_grad, accumulator.bias_grad);
  }
}

}  // namespace sluice::kernels
