#include "core/runtime/domain_deconv.h"

#include "kernels/tile_grid.h"

namespace sluice::runtime {

DomainDeconv::DomainDeconv(kernels::Backend& backend, const DomainField& field, const kernels::DeconvGeometry& deconv,
                           bool with_bias, const std::string& name)
    : backend_(backend), field_(field), tiled_{deconv, field.grid()}, with_bias_(with_bias),
      grads_(name + " parameter gradients") {
  kernels::check_tiled_deconv(tiled_);
}

kernels::Tensor DomainDeconv::forward(const kernels::Tensor& x, const kernels::Tensor& weight,
                                      const kernels::Tensor* bias) const {
  const int64_t points = kernels::extent_product(kernels::deconv_block_out_extents(tiled_));
  kernels::Tensor y = backend_.empty(x.rows(), tiled_.deconv.out_channels * points);
  kernels::tiled_deconv_forward(backend_, tiled_, x, weight, bias, y);
  return y;
}

kernels::Tensor DomainDeconv::backward_data(const kernels::Tensor& dy, const kernels::Tensor& weight) const {
  kernels::Tensor dx = backend_.empty(dy.rows(), tiled_.deconv.in_channels * tiled_.grid.block_points());
  kernels::tiled_deconv_backward_data(backend_, tiled_, dy, weight, dx);
  return dx;
}

void DomainDeconv::accumulate_param_grads(const kernels::Tensor& x, const kernels::Tensor& dy) {
  grads_.accumulate(backend_, kernels::tiled_deconv_param_grad_partials(backend_, tiled_, x, dy, with_bias_));
}

void DomainDeconv::finish_step(kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) {
  grads_.finish_step(backend_, field_.gather(), tiled_.grid.global_tiles(), weight_grad,
                     with_bias_ ? bias_grad : nullptr);
}

}  // namespace sluice::runtime
