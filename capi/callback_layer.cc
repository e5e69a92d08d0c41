#include "capi/callback_layer.h"

#include <cstring>
#include <string>
#include <utility>

#include "capi/layer_call.h"
#include "core/common/error.h"
#include "core/common/non_finite.h"

namespace sluice::capi {

CallbackLayer::CallbackLayer(std::string name, const sluice_layer_ops& ops, void* user_data)
    : name_(std::move(name)), ops_(ops), user_data_(user_data) {
  params_.name = "params";
  if (ops_.num_params > 0) {
    params_.value = kernels::Tensor::host(1, ops_.num_params);
    params_.grad = kernels::Tensor::host(1, ops_.num_params);
  }
}

double CallbackLayer::flops_per_sample() const {
  // The declared forward cost, times 3 for the two backward halves (as a dense layer's 6·in·out is 3 x 2·in·out).
  if (ops_.forward_flops > 0.0) return 3.0 * ops_.forward_flops;
  // Unknown to us; weigh it like a dense layer of its size so the partition has something sensible.
  return 6.0 * static_cast<double>(ops_.in_features) * static_cast<double>(ops_.out_features);
}

std::vector<model::Parameter*> CallbackLayer::parameters() {
  if (ops_.num_params == 0) return {};
  params_.layer_index = global_index();
  return {&params_};
}

void CallbackLayer::init(uint64_t /*seed*/) {
  if (ops_.num_params == 0) return;
  if (ops_.initial_params != nullptr) {
    std::memcpy(params_.value.data(), ops_.initial_params, params_.value.bytes());
  } else {
    std::memset(params_.value.data(), 0, params_.value.bytes());
  }
}

sluice_layer_call CallbackLayer::call_info(int64_t rows) const {
  sluice_layer_call call = SLUICE_LAYER_CALL_INIT;
  call.in_features = ops_.in_features;
  call.out_features = ops_.out_features;
  call.rows = rows;
  call.num_params = ops_.num_params;
  call.layer = global_index();
  call.name = name_.c_str();
  return call;
}

void CallbackLayer::check(int rc, const char* callback) const {
  if (rc != 0) {
    throw Error(ErrorCode::kCallback, "custom layer '" + name_ + "' (model.layers[" +
                                          std::to_string(global_index()) + "]): " + callback + " returned " +
                                          std::to_string(rc));
  }
}

void CallbackLayer::check_finite(const kernels::Tensor& out, const char* callback, const char* what,
                                 const kernels::Tensor& in) const {
  const std::string problem = first_non_finite(out.data(), out.rows(), out.cols(), what);
  if (problem.empty()) return;
  // Said either way, so that a NaN arriving from an earlier layer is not blamed on this one.
  const bool in_finite = first_non_finite(in.data(), in.rows(), in.cols(), "").empty();
  throw Error(ErrorCode::kNumeric, "custom layer '" + name_ + "' (model.layers[" + std::to_string(global_index()) +
                                       "]): " + callback + " wrote a " + problem +
                                       (in_finite ? " from finite arguments" : " (its arguments were not finite)"));
}

kernels::Tensor CallbackLayer::forward(kernels::Tensor x, const model::ForwardContext& /*context*/,
                                       model::LayerSaved& saved) {
  kernels::Tensor y = kernels::Tensor::host(x.rows(), ops_.out_features);
  const float* params = ops_.num_params > 0 ? params_.value.data() : nullptr;
  const sluice_layer_call call = call_info(x.rows());
  const LayerCallScope scope(call);
  check(ops_.forward(user_data_, params, x.data(), y.data(), x.rows()), "forward");
  check_finite(y, "forward", "outputs", x);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));
  return y;
}

kernels::Tensor CallbackLayer::backward_input(const kernels::Tensor& dy, model::LayerSaved& saved) {
  const kernels::Tensor& x = saved.tensors.at(0);
  kernels::Tensor dx = kernels::Tensor::host(x.rows(), ops_.in_features);
  const float* params = ops_.num_params > 0 ? params_.value.data() : nullptr;
  const sluice_layer_call call = call_info(x.rows());
  const LayerCallScope scope(call);
  check(ops_.backward_input(user_data_, params, x.data(), dy.data(), dx.data(), x.rows()), "backward_input");
  check_finite(dx, "backward_input", "input gradient", dy);
  return dx;
}

void CallbackLayer::backward_weight(const kernels::Tensor& dy, model::LayerSaved& saved) {
  if (ops_.num_params == 0) return;
  const kernels::Tensor& x = saved.tensors.at(0);
  const sluice_layer_call call = call_info(x.rows());
  const LayerCallScope scope(call);
  check(ops_.backward_weight(user_data_, params_.value.data(), x.data(), dy.data(), params_.grad.data(), x.rows()),
        "backward_weight");
}

kernels::Tensor CallbackLayer::backward(const kernels::Tensor& dy, model::LayerSaved& saved) {
  if (ops_.backward == nullptr) return model::Layer::backward(dy, saved);
  const kernels::Tensor& x = saved.tensors.at(0);
  kernels::Tensor dx = kernels::Tensor::host(x.rows(), ops_.in_features);
  float* grads = ops_.num_params > 0 ? params_.grad.data() : nullptr;
  const float* params = ops_.num_params > 0 ? params_.value.data() : nullptr;
  const sluice_layer_call call = call_info(x.rows());
  const LayerCallScope scope(call);
  check(ops_.backward(user_data_, params, x.data(), dy.data(), dx.data(), grads, x.rows()), "backward");
  check_finite(dx, "backward", "input gradient", dy);
  return dx;
}

model::CustomLayerFactory callback_layer_factory(std::string name, const sluice_layer_ops& ops, void* user_data) {
  return [name, ops, user_data](int64_t in_features) -> std::unique_ptr<model::Layer> {
    if (in_features != ops.in_features) {
      throw Error(ErrorCode::kConfig, "custom layer '" + name + "' was registered with in_features " +
                                          std::to_string(ops.in_features) + " but the previous layer produces " +
                                          std::to_string(in_features));
    }
    return std::make_unique<CallbackLayer>(name, ops, user_data);
  };
}

}  // namespace sluice::capi
