#include "core/runtime/domain_loss.h"

#include <vector>

namespace sluice::runtime {

double domain_field_loss(kernels::Backend& backend, const DomainField& field, kernels::FieldLoss loss,
                         int64_t channels, const kernels::Tensor& pred, const kernels::Tensor& target,
                         float grad_scale, kernels::Tensor& grad, const std::string& what) {
  const std::vector<kernels::TileLoss> mine =
      kernels::tiled_field_loss(backend, loss, field.grid(), channels, pred, target, grad_scale, grad);
  std::vector<int64_t> tiles;
  std::vector<double> sums;
  for (const kernels::TileLoss& t : mine) {
    tiles.push_back(t.tile);
    sums.push_back(t.value);
  }
  const int64_t global_tiles = field.grid().global_tiles();
  const std::vector<double> all = field.gather().all_tiles(tiles, sums, 1, global_tiles, what);
  std::vector<kernels::TileLoss> every(static_cast<size_t>(global_tiles));
  for (int64_t t = 0; t < global_tiles; ++t) every[static_cast<size_t>(t)] = {t, all[static_cast<size_t>(t)]};
  return kernels::sum_tile_losses(every, global_tiles);
}

}  // namespace sluice::runtime
