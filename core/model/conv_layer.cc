#include "core/model/conv_layer.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

namespace {

// A block's halo is its neighbours' points, and at the field's global edges the periodic wrap, zeros (padding
// zeros: the layer's explicit_padding is empty) or the block's own points reflected. A 1-wide kernel reads no halo.
std::unique_ptr<DomainConvOps> conv_on_domain(kernels::Backend& backend, FieldDomain& domain,
                                              const kernels::ConvGeometry& g, bool with_bias,
                                              std::optional<kernels::PadMode> padding) {
  check_domain_level(domain, g.in, "conv layer");
  bool pads = false;
  for (size_t d = 0; d < g.dims(); ++d) pads = pads || g.pad_low[d] > 0 || g.pad_high[d] > 0;
  return domain.conv(backend, g, with_bias, pads ? padding : std::optional(kernels::PadMode::kPeriodic),
                     "conv layer");
}

}  // namespace

ConvLayer::ConvLayer(kernels::Backend& backend, const kernels::ConvGeometry& geometry, bool with_bias,
                     std::optional<kernels::PadMode> explicit_padding, FieldDomain* domain)
    : backend_(backend), geometry_(geometry), computed_(geometry) {
  kernels::complete_conv_geometry(geometry_);
  if (explicit_padding) {
    pad_ = kernels::PadGeometry{*explicit_padding, geometry_.in_channels, geometry_.in, geometry_.pad_low,
                                geometry_.pad_high};
    kernels::check_pad_geometry(*pad_);
    computed_.in = pad_->padded();
    computed_.pad_low.assign(geometry_.dims(), 0);
    computed_.pad_high.assign(geometry_.dims(), 0);
  }
  kernels::complete_conv_geometry(computed_);
  std::vector<int64_t> shape = {geometry_.out_channels, geometry_.in_channels / geometry_.groups};
  shape.insert(shape.end(), geometry_.kernel.begin(), geometry_.kernel.end());
  params_ = KernelParameters(backend, geometry_.out_channels, geometry_.weight_cols(), std::move(shape), with_bias,
                             geometry_.out_channels);
  if (domain != nullptr) {
    domain_ = conv_on_domain(backend, *domain, geometry_, with_bias, explicit_padding);
    block_points_ = domain->block_points();
  }
}

int64_t ConvLayer::in_features() const {
  return domain_ ? geometry_.in_channels * block_points_ : geometry_.in_features();
}

int64_t ConvLayer::out_features() const {
  return domain_ ? geometry_.out_channels * block_points_ : geometry_.out_features();
}

double ConvLayer::flops_per_sample() const { return conv_flops(geometry_); }

std::vector<Parameter*> ConvLayer::parameters() { return params_.parameters(); }

// PyTorch's default: weight and bias uniform in ±1/√fan_in, fan_in = in/groups · Π kernel (kaiming_uniform with
// a = √5 comes to the same bound), from this layer's own streams.
void ConvLayer::init(uint64_t seed) {
  params_.init(backend_, seed, global_index(), geometry_.weight_cols());
}

Tensor ConvLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  saved.tensors.clear();
  if (domain_) {
    // The halo fill, unless a recompute was handed the first forward's (pipeline.recompute_halos: stash).
    Tensor padded = saved.take_halo_input();
    if (padded.empty()) padded = domain_->pad_input(x);
    Tensor y = domain_->forward(padded, params_.weight.value, params_.bias_value());
    saved.halo_input = std::move(padded);  // the parameter gradients read the padded block
    return y;
  }
  if (pad_) {
    Tensor padded = backend_.empty(x.rows(), pad_->out_features());
    backend_.pad_forward(*pad_, x, padded);
    x = std::move(padded);
  }
  Tensor y = backend_.empty(x.rows(), computed_.out_features());
  backend_.conv_forward(computed_, x, params_.weight.value, params_.bias_value(), y);
  saved.tensors.push_back(std::move(x));  // the weight gradient reads the (padded) input
  return y;
}

Tensor ConvLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  if (domain_) return domain_->backward_data(dy, params_.weight.value);
  Tensor dx = backend_.empty(dy.rows(), computed_.in_features());
  backend_.conv_backward_data(computed_, dy, params_.weight.value, dx);
  if (!pad_) return dx;
  Tensor unpadded = backend_.empty(dy.rows(), geometry_.in_features());
  backend_.pad_backward(*pad_, dx, unpadded);
  return unpadded;
}

void ConvLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  if (domain_) {
    domain_->accumulate_param_grads(saved.halo_input, dy);  // into the per-tile accumulators: finish_domain_step
    return;
  }
  backend_.conv_accumulate_param_grads(computed_, saved.tensors[0], dy, params_.weight.grad, params_.bias_grad());
}

// The model's first layer: dL/dx is a full backward-data convolution that the weight gradient never reads.
void ConvLayer::backward_input_without_dx(const Tensor& dy, LayerSaved& saved) {
  (void)dy;
  (void)saved;
}

void ConvLayer::backward_without_dx(const Tensor& dy, LayerSaved& saved) { backward_weight(dy, saved); }

void ConvLayer::finish_domain_step() {
  if (domain_) domain_->finish_step(params_.weight.grad, params_.bias_grad());
}

}  // namespace sluice::model
