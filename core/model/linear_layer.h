// linear: y = x W^T (+ b).
#pragma once

#include "core/model/affine.h"
#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

class LinearLayer : public Layer {
 public:
  LinearLayer(kernels::Backend& backend, int64_t in_features, int64_t out_features, bool with_bias);

  std::string type() const override { return "linear"; }
  int64_t in_features() const override { return affine_.in_features(); }
  int64_t out_features() const override { return affine_.out_features(); }
  double flops_per_sample() const override { return affine_.flops_per_sample(); }
  std::vector<Parameter*> parameters() override;
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  // Fuses with a following activation layer: bias add and activation in one backend op.
  bool forward_with_next(Layer& next, kernels::Tensor& x, const ForwardContext& context, LayerSaved& saved,
                         LayerSaved& next_saved, kernels::Tensor* between, kernels::Tensor& y) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  // W reads only the saved input and dy, so without dx there is nothing to do in I (one GEMM saved), and B is W.
  void backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  Affine affine_;
};

}  // namespace sluice::model
