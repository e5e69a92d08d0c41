#include "core/model/conv_transpose_layer.h"

#include <cmath>
#include <utility>

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

ConvTransposeLayer::ConvTransposeLayer(kernels::Backend& backend, const kernels::DeconvGeometry& geometry,
                                       bool with_bias, FieldDomain* domain)
    : backend_(backend), geometry_(geometry) {
  kernels::check_deconv_geometry(geometry_);
  // PyTorch's [in, out/groups, k..], groups 1.
  std::vector<int64_t> shape = {geometry_.in_channels, geometry_.out_channels};
  shape.insert(shape.end(), geometry_.kernel.begin(), geometry_.kernel.end());
  params_ = KernelParameters(backend, geometry_.in_channels, geometry_.weight_cols(), std::move(shape), with_bias,
                             geometry_.out_channels);
  if (domain != nullptr) {
    check_domain_level(*domain, geometry_.in, "conv_transpose layer");
    domain_ = domain->deconv(backend, geometry_, with_bias, "conv_transpose layer");
    block_points_ = domain->block_points();
  }
}

int64_t ConvTransposeLayer::in_features() const {
  return domain_ ? geometry_.in_channels * block_points_ : geometry_.in_features();
}

// stride = kernel on a domain: each input point feeds its own Π kernel output points.
int64_t ConvTransposeLayer::out_features() const {
  if (!domain_) return geometry_.out_features();
  int64_t per_point = geometry_.out_channels;
  for (const int64_t k : geometry_.kernel) per_point *= k;
  return per_point * block_points_;
}

double ConvTransposeLayer::flops_per_sample() const { return deconv_flops(geometry_); }

std::vector<Parameter*> ConvTransposeLayer::parameters() { return params_.parameters(); }

// PyTorch's default: weight and bias uniform in ±1/√fan_in, where PyTorch's fan_in of a ConvTranspose weight
// [in, out, k..] is its dimension 1 times the kernel, out · Π kernel (torch.nn.init._calculate_fan_in_and_fan_out);
// kaiming_uniform with a = √5 comes to the same bound. From this layer's own streams.
void ConvTransposeLayer::init(uint64_t seed) {
  params_.init(backend_, seed, global_index(), geometry_.weight_cols());
}

Tensor ConvTransposeLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  saved.tensors.clear();
  if (domain_) {
    Tensor y = domain_->forward(x, params_.weight.value, params_.bias_value());
    saved.tensors.push_back(std::move(x));
    return y;
  }
  Tensor y = backend_.empty(x.rows(), geometry_.out_features());
  backend_.deconv_forward(geometry_, x, params_.weight.value, params_.bias_value(), y);
  saved.tensors.push_back(std::move(x));  // the weight gradient reads the input
  return y;
}

Tensor ConvTransposeLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  if (domain_) return domain_->backward_data(dy, params_.weight.value);
  Tensor dx = backend_.empty(dy.rows(), geometry_.in_features());
  backend_.deconv_backward_data(geometry_, dy, params_.weight.value, dx);
  return dx;
}

void ConvTransposeLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  if (domain_) {
    domain_->accumulate_param_grads(saved.tensors[0], dy);  // per-tile accumulators: finish_domain_step
    return;
  }
  backend_.deconv_accumulate_param_grads(geometry_, saved.tensors[0], dy, params_.weight.grad,
                                         params_.bias_grad());
}

// The model's first layer: dL/dx is a full convolution that the weight gradient never reads.
void ConvTransposeLayer::backward_input_without_dx(const Tensor& dy, LayerSaved& saved) {
  (void)dy;
  (void)saved;
}

void ConvTransposeLayer::backward_without_dx(const Tensor& dy, LayerSaved& saved) { backward_weight(dy, saved); }

}  // namespace sluice::model

namespace sluice::model {

void ConvTransposeLayer::finish_domain_step() {
  if (domain_) domain_->finish_step(params_.weight.grad, params_.bias_grad());
}

}  // namespace sluice::model
