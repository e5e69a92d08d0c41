#include "core/runtime/domain_conv.h"

namespace sluice::runtime {

DomainConv::DomainConv(kernels::Backend& backend, const DomainField& field, const kernels::ConvGeometry& conv,
                       bool with_bias, const std::string& name, comm::HaloSide edge)
    : backend_(backend), field_(field), tiled_{conv, field.grid()}, with_bias_(with_bias), edge_(edge),
      grads_(name + " parameter gradients") {
  kernels::check_tiled_conv(tiled_);
  if (edge_ == comm::HaloSide::kReflect) kernels::check_reflect_tiles(tiled_, name);
}

kernels::Tensor DomainConv::pad_input(const kernels::Tensor& x) const {
  return field_.padded(x, tiled_.conv.in_channels, tiled_.conv.pad_low, tiled_.conv.pad_high, edge_);
}

kernels::Tensor DomainConv::forward(const kernels::Tensor& x_padded, const kernels::Tensor& weight,
                                    const kernels::Tensor* bias) const {
  kernels::Tensor y =
      backend_.empty(x_padded.rows(), tiled_.conv.out_channels * tiled_.grid.block_points());
  kernels::tiled_conv_forward(backend_, tiled_, x_padded, weight, bias, y);
  return y;
}

kernels::Tensor DomainConv::backward_data(const kernels::Tensor& dy, const kernels::Tensor& weight) const {
  // The gather form reads dy from tile − pad_high to tile + pad_low: the forward's halo mirrored.
  // Beyond a zero or reflect edge no output lies: dy's halo there is zeros.
  const comm::HaloSide dy_edge = edge_ == comm::HaloSide::kNeighbour ? edge_ : comm::HaloSide::kZeros;
  const kernels::Tensor dy_padded =
      field_.padded(dy, tiled_.conv.out_channels, tiled_.conv.pad_high, tiled_.conv.pad_low, dy_edge);
  kernels::Tensor dx = backend_.empty(dy.rows(), tiled_.conv.in_channels * tiled_.grid.block_points());
  if (edge_ == comm::HaloSide::kReflect) {
    kernels::tiled_conv_backward_data_reflect(backend_, tiled_, dy_padded, weight, dx);
  } else {
    kernels::tiled_conv_backward_data(backend_, tiled_, dy_padded, weight, dx);
  }
  return dx;
}

void DomainConv::accumulate_param_grads(const kernels::Tensor& x_padded, const kernels::Tensor& dy) {
  grads_.accumulate(backend_, kernels::tiled_conv_param_grad_partials(backend_, tiled_, x_padded, dy, with_bias_));
}

void DomainConv::finish_step(kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) {
  grads_.finish_step(backend_, field_.gather(), tiled_.grid.global_tiles(), weight_grad,
                     with_bias_ ? bias_grad : nullptr);
}

}  // namespace sluice::runtime
