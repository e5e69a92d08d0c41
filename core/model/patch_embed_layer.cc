#include "core/model/patch_embed_layer.h"

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

PatchEmbedLayer::PatchEmbedLayer(kernels::Backend& backend, const kernels::ConvGeometry& geometry)
    : backend_(backend), geometry_(geometry) {
  kernels::complete_conv_geometry(geometry_);
  std::vector<int64_t> shape = {geometry_.out_channels, geometry_.in_channels};
  shape.insert(shape.end(), geometry_.kernel.begin(), geometry_.kernel.end());
  proj_ = KernelParameters(backend, geometry_.out_channels, geometry_.weight_cols(), std::move(shape), true,
                           geometry_.out_channels);
  proj_.weight.name = "proj.weight";
  proj_.bias->name = "proj.bias";
  pos_embed_.name = "pos_embed";
  pos_embed_.value = backend.zeros(1, geometry_.out_features());
  pos_embed_.grad = backend.zeros(1, geometry_.out_features());
  pos_embed_.shape = {1, geometry_.out_channels, geometry_.out_features() / geometry_.out_channels};
}

double PatchEmbedLayer::flops_per_sample() const { return patch_embed_flops(geometry_); }

std::vector<Parameter*> PatchEmbedLayer::parameters() {
  std::vector<Parameter*> all = proj_.parameters();
  all.push_back(&pos_embed_);
  return all;
}

// The projection as a conv's default (uniform in ±1/√(C·Π p)); the position embedding zeros (it learns from
// there; a fixed start keeps the init independent of the patch grid).
void PatchEmbedLayer::init(uint64_t seed) {
  proj_.init(backend_, seed, global_index(), geometry_.weight_cols());
  backend_.fill(0.0f, pos_embed_.value);
}

Tensor PatchEmbedLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = backend_.empty(x.rows(), geometry_.out_features());
  backend_.conv_forward(geometry_, x, proj_.weight.value, proj_.bias_value(), y);
  backend_.add_bias(pos_embed_.value, y);  // the same embedding added to every sample
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));
  return y;
}

Tensor PatchEmbedLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  Tensor dx = backend_.empty(dy.rows(), geometry_.in_features());
  backend_.conv_backward_data(geometry_, dy, proj_.weight.value, dx);
  return dx;
}

void PatchEmbedLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  backend_.conv_accumulate_param_grads(geometry_, saved.tensors[0], dy, proj_.weight.grad, proj_.bias_grad());
  backend_.accumulate_bias_grad(dy, pos_embed_.grad);
}

// The model's first layer (the usual place of a patch_embed): dL/dx is a full backward-data convolution that the
// weight gradient never reads.
void PatchEmbedLayer::backward_input_without_dx(const Tensor& dy, LayerSaved& saved) {
  (void)dy;
  (void)saved;
}

void PatchEmbedLayer::backward_without_dx(const Tensor& dy, LayerSaved& saved) { backward_weight(dy, saved); }

}  // namespace sluice::model
