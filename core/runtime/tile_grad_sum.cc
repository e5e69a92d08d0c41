#include "core/runtime/tile_grad_sum.h"

#include <utility>

#include "core/common/error.h"
#include "core/runtime/domain_field.h"

namespace sluice::runtime {

void TileGradSum::accumulate(kernels::Backend& backend, const std::vector<kernels::TilePartial>& micro_batch) {
  kernels::accumulate_tile_partials(backend, micro_batch, accumulators_);
}

void TileGradSum::finish_step(kernels::Backend& backend, comm::TileGather& gather, int64_t global_tiles,
                              kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) {
  require_host("tile gradient sum", "weight_grad", weight_grad);
  const int64_t weights = weight_grad.size();
  const int64_t biases = bias_grad != nullptr ? bias_grad->size() : 0;
  const int64_t per_tile = weights + biases;
  // Each tile's accumulator as one record: its weight gradient, then its bias gradient.
  std::vector<int64_t> tiles;
  std::vector<float> values;
  for (const kernels::TilePartial& p : accumulators_) {
    if (p.weight_grad.size() != weights || (bias_grad != nullptr && p.bias_grad.size() != biases)) {
      throw Error(ErrorCode::kInvalidArgument, what_ + ": tile " + std::to_string(p.tile) +
                                                   "'s partial does not have the gradient's shape");
    }
    tiles.push_back(p.tile);
    const std::vector<float> w = p.weight_grad.to_vector();
    values.insert(values.end(), w.begin(), w.end());
    if (bias_grad != nullptr) {
      const std::vector<float> b = p.bias_grad.to_vector();
      values.insert(values.end(), b.begin(), b.end());
    }
  }
  accumulators_.clear();
  const std::vector<float> all = gather.all_tiles(tiles, values, per_tile, global_tiles, what_);
  // Back into partials, one per tile of the field, which add_tile_partials adds in tile order.
  std::vector<kernels::TilePartial> partials(static_cast<size_t>(global_tiles));
  for (int64_t t = 0; t < global_tiles; ++t) {
    const float* record = all.data() + t * per_tile;
    kernels::TilePartial& p = partials[static_cast<size_t>(t)];
    p.tile = t;
    p.weight_grad = backend.from_host(weight_grad.rows(), weight_grad.cols(), record);
    if (bias_grad != nullptr) p.bias_grad = backend.from_host(bias_grad->rows(), bias_grad->cols(), record + weights);
  }
  kernels::add_tile_partials(backend, partials, global_tiles, weight_grad, bias_grad);
}

}  // namespace sluice::runtime
