// A model::Layer whose computations are the application's C (or Fortran bind(C)) callbacks: how a
// simulation code hands one of its own computations to the pipeline. The layer keeps its parameters in a
// Sluice tensor (so they are optimized, reduced and checkpointed like any other) and stashes its input
// for the backward callbacks.
#pragma once

#include <string>

#include "capi/include/sluice/sluice.h"
#include "core/model/builder.h"
#include "core/model/layer.h"

namespace sluice::capi {

class CallbackLayer : public model::Layer {
 public:
  CallbackLayer(std::string name, const sluice_layer_ops& ops, void* user_data);

  std::string type() const override { return "custom:" + name_; }
  int64_t in_features() const override { return ops_.in_features; }
  int64_t out_features() const override { return ops_.out_features; }
  double flops_per_sample() const override;
  double stash_bytes_per_sample() const override { return ops_.activation_bytes; }
  Arrays arrays() const override { return ops_.device != 0 ? Arrays::kDevice : Arrays::kHost; }
  std::vector<model::Parameter*> parameters() override;
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const model::ForwardContext& context,
                          model::LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, model::LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, model::LayerSaved& saved) override;
  kernels::Tensor backward(const kernels::Tensor& dy, model::LayerSaved& saved) override;
  // backward_input_without_dx / backward_without_dx keep Layer's defaults on purpose: as the model's first layer
  // the application's backward_input (or fused backward) callback still runs and only its dx is dropped, so the
  // callbacks are called exactly as on any other layer (sluice.h promises backward_input then backward_weight).

 private:
  void check(int rc, const char* callback) const;
  // NUMERIC when `callback` wrote a NaN/Inf into `out` (`what`: "outputs", "input gradient"), naming this layer.
  void check_finite(const kernels::Tensor& out, const char* callback, const char* what,
                    const kernels::Tensor& in) const;
  // What sluice_layer_call_info answers while a callback of this layer runs on a micro-batch of `rows` rows.
  sluice_layer_call call_info(int64_t rows) const;

  std::string name_;
  sluice_layer_ops ops_;
  void* user_data_;
  model::Parameter params_;
};

// The factory the model builder calls for `{type: custom, name: NAME}`; checks that the registered
// in_features matches what the previous layer produces.
model::CustomLayerFactory callback_layer_factory(std::string name, const sluice_layer_ops& ops, void* user_data);

}  // namespace sluice::capi
