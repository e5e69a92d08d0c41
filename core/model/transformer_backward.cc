// TransformerLayer's backward: I (the input gradient, leaving the gradient at each map's output for W) and W (the
// parameter gradients, each one product or sum over all token rows), so the zero-bubble schedules can split them.
#include "core/model/transformer_layer.h"

namespace sluice::model {

using kernels::Tensor;
using kernels::Transpose;

Tensor TransformerLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  const std::vector<Tensor>& s = saved.tensors;
  const int64_t rows = dy.rows() * tokens_;
  Tensor g2 = backend_.empty(rows, dim_);
  backend_.tokens_to_rows(dim_, tokens_, dy, g2);
  Tensor dhidden = backend_.empty(rows, hidden_);
  backend_.gemm(Transpose::kNo, Transpose::kNo, 1.0f, g2, p(kFc2W).value, 0.0f, dhidden);
  Tensor dpre = backend_.empty(rows, hidden_);
  backend_.activation_backward(kernels::Activation::kGelu, s[kPre], dhidden, dpre);  // GELU's reads its input
  Tensor dln2 = backend_.empty(rows, dim_);
  backend_.gemm(Transpose::kNo, Transpose::kNo, 1.0f, dpre, p(kFc1W).value, 0.0f, dln2);
  Tensor dx1 = backend_.empty(rows, dim_);
  backend_.layernorm_backward_input(dln2, s[kX1], p(kNorm2W).value, s[kMean2], s[kRstd2], dx1);
  backend_.axpy(1.0f, g2, dx1);
  Tensor dattn = backend_.empty(rows, dim_);
  backend_.gemm(Transpose::kNo, Transpose::kNo, 1.0f, dx1, p(kProjW).value, 0.0f, dattn);
  Tensor dqkv = backend_.empty(rows, 3 * dim_);
  backend_.attention_backward(geometry_for(saved.context), s[kQkv], s[kProbs], dattn, dqkv);
  Tensor dln1 = backend_.empty(rows, dim_);
  backend_.gemm(Transpose::kNo, Transpose::kNo, 1.0f, dqkv, p(kQkvW).value, 0.0f, dln1);
  Tensor dxt = backend_.empty(rows, dim_);
  backend_.layernorm_backward_input(dln1, s[kX], p(kNorm1W).value, s[kMean1], s[kRstd1], dxt);
  backend_.axpy(1.0f, dx1, dxt);
  Tensor dx = backend_.empty(dy.rows(), dim_ * tokens_);
  backend_.rows_to_tokens(dim_, tokens_, dxt, dx);
  saved.weight_grad_inputs.clear();
  for (Tensor* t : {&g2, &dpre, &dln2, &dx1, &dqkv, &dln1}) saved.weight_grad_inputs.push_back(std::move(*t));
  return dx;
}

void TransformerLayer::accumulate_linear(const Tensor& dy, const Tensor& x, Index weight) {
  backend_.gemm(Transpose::kYes, Transpose::kNo, 1.0f, dy, x, 1.0f, params_[weight].grad);
  backend_.accumulate_bias_grad(dy, params_[weight + 1].grad);
}

void TransformerLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  (void)dy;  // backward_input kept it as token rows
  const std::vector<Tensor>& s = saved.tensors;
  const std::vector<Tensor>& g = saved.weight_grad_inputs;
  accumulate_linear(g[kDy], s[kHidden], kFc2W);
  accumulate_linear(g[kDPre], s[kLn2], kFc1W);
  backend_.layernorm_accumulate_param_grads(g[kDLn2], s[kX1], s[kMean2], s[kRstd2], p(kNorm2W).grad,
                                            p(kNorm2B).grad);
  accumulate_linear(g[kDx1], s[kAttn], kProjW);
  accumulate_linear(g[kDQkv], s[kLn1], kQkvW);
  backend_.layernorm_accumulate_param_grads(g[kDLn1], s[kX], s[kMean1], s[kRstd1], p(kNorm1W).grad,
                                            p(kNorm1B).grad);
}

}  // namespace sluice::model
