#include "core/runtime/domain_norm.h"

#include <vector>

namespace sluice::runtime {

DomainGroupNorm::DomainGroupNorm(kernels::Backend& backend, const DomainField& field,
                                 const kernels::NormGeometry& norm, const std::string& name)
    : backend_(backend), field_(field), tiled_{norm, field.grid()}, name_(name),
      grads_(name + " parameter gradients") {
  kernels::check_tiled_group_norm(tiled_);
}

std::vector<double> DomainGroupNorm::gathered(const std::vector<double>& mine, int64_t samples,
                                              const std::string& what) const {
  return field_.gather().all_tiles(kernels::block_tile_indices(tiled_.grid), mine,
                                   kernels::group_norm_sums_per_tile(tiled_, samples), tiled_.grid.global_tiles(),
                                   name_ + " " + what);
}

kernels::Tensor DomainGroupNorm::forward(const kernels::Tensor& x, const kernels::Tensor& weight,
                                         const kernels::Tensor& bias, kernels::GroupNormStatistics& stats) const {
  const std::vector<double> all = gathered(kernels::tiled_group_norm_sums(backend_, tiled_, x), x.rows(),
                                           "statistics' tile sums");
  stats = kernels::group_norm_statistics(backend_, tiled_, x.rows(), all);
  kernels::Tensor y = backend_.empty(x.rows(), x.cols());
  kernels::tiled_group_norm_forward(backend_, tiled_, x, weight, bias, stats, y);
  return y;
}

kernels::Tensor DomainGroupNorm::backward_data(const kernels::Tensor& dy, const kernels::Tensor& x,
                                               const kernels::Tensor& weight,
                                               const kernels::GroupNormStatistics& stats) const {
  const std::vector<double> all =
      gathered(kernels::tiled_group_norm_backward_sums(backend_, tiled_, dy, x, weight, stats), x.rows(),
               "backward tile sums");
  kernels::Tensor dx = backend_.empty(x.rows(), x.cols());
  kernels::tiled_group_norm_backward_data(backend_, tiled_, dy, x, weight, stats, all, dx);
  return dx;
}

void DomainGroupNorm::accumulate_param_grads(const kernels::Tensor& dy, const kernels::Tensor& x,
                                             const kernels::GroupNormStatistics& stats) {
  grads_.accumulate(backend_, kernels::tiled_group_norm_param_grad_partials(backend_, tiled_, dy, x, stats));
}

void DomainGroupNorm::finish_step(kernels::Tensor& weight_grad, kernels::Tensor& bias_grad) {
  grads_.finish_step(backend_, field_.gather(), tiled_.grid.global_tiles(), weight_grad, &bias_grad);
}

DomainChannelLayerNorm::DomainChannelLayerNorm(kernels::Backend& backend, const DomainField& field,
                                               const kernels::NormGeometry& norm, const std::string& name)
    : backend_(backend), field_(field), tiled_{norm, field.grid()}, grads_(name + " parameter gradients") {
  kernels::check_tiled_group_norm(tiled_);
}

void DomainChannelLayerNorm::accumulate_param_grads(const kernels::Tensor& dy, const kernels::Tensor& x,
                                                    const kernels::Tensor& mean, const kernels::Tensor& rstd) {
  grads_.accumulate(backend_,
                    kernels::tiled_channel_layernorm_param_grad_partials(backend_, tiled_, dy, x, mean, rstd));
}

void DomainChannelLayerNorm::finish_step(kernels::Tensor& weight_grad, kernels::Tensor& bias_grad) {
  grads_.finish_step(backend_, field_.gather(), tiled_.grid.global_tiles(), weight_grad, &bias_grad);
}

}  // namespace sluice::runtime
