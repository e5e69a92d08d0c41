#include "core/model/transformer_layer.h"

#include <cmath>
#include <utility>

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;
using kernels::Transpose;

TransformerLayer::TransformerLayer(kernels::Backend& backend, int64_t dim, int64_t tokens, int64_t heads,
                                   int64_t mlp_ratio, float eps, float dropout)
    : backend_(backend), dim_(dim), tokens_(tokens), hidden_(mlp_ratio * dim), eps_(eps), dropout_(dropout) {
  geometry_.tokens = tokens;
  geometry_.dim = dim;
  geometry_.heads = heads;
  add_parameter(kNorm1W, "norm1.weight", 1, dim);
  add_parameter(kNorm1B, "norm1.bias", 1, dim);
  add_parameter(kQkvW, "attn.qkv.weight", 3 * dim, dim);
  add_parameter(kQkvB, "attn.qkv.bias", 1, 3 * dim);
  add_parameter(kProjW, "attn.proj.weight", dim, dim);
  add_parameter(kProjB, "attn.proj.bias", 1, dim);
  add_parameter(kNorm2W, "norm2.weight", 1, dim);
  add_parameter(kNorm2B, "norm2.bias", 1, dim);
  add_parameter(kFc1W, "mlp.fc1.weight", hidden_, dim);
  add_parameter(kFc1B, "mlp.fc1.bias", 1, hidden_);
  add_parameter(kFc2W, "mlp.fc2.weight", dim, hidden_);
  add_parameter(kFc2B, "mlp.fc2.bias", 1, dim);
  init(0);
}

void TransformerLayer::add_parameter(Index index, const char* name, int64_t rows, int64_t cols) {
  Parameter& parameter = params_[index];
  parameter.name = name;
  parameter.value = backend_.zeros(rows, cols);
  parameter.grad = backend_.zeros(rows, cols);
  parameter.shape = rows == 1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{rows, cols};
}

double TransformerLayer::flops_per_sample() const {
  return transformer_flops(dim_, tokens_, geometry_.heads, hidden_);
}

double TransformerLayer::stash_bytes_per_sample() const {
  return transformer_stash_bytes(dim_, tokens_, geometry_.heads, hidden_);
}

std::vector<Parameter*> TransformerLayer::parameters() {
  std::vector<Parameter*> all;
  for (Parameter& parameter : params_) all.push_back(&parameter);
  return all;
}

void TransformerLayer::init(uint64_t seed) {
  for (int index = 0; index < kCount; index += 2) {
    Parameter& weight = params_[index];
    Parameter& bias = params_[index + 1];
    if (index == kNorm1W || index == kNorm2W) {
      backend_.fill(1.0f, weight.value);
      backend_.fill(0.0f, bias.value);
      continue;
    }
    const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(weight.value.cols())));
    backend_.fill_uniform(kernels::init_stream(seed, global_index(), index), -bound, bound, weight.value);
    backend_.fill_uniform(kernels::init_stream(seed, global_index(), index + 1), -bound, bound, bias.value);
  }
}

Tensor TransformerLayer::linear(const Tensor& x, Index weight) {
  Tensor y = backend_.empty(x.rows(), params_[weight].value.rows());
  backend_.gemm(Transpose::kNo, Transpose::kYes, 1.0f, x, params_[weight].value, 0.0f, y);
  backend_.add_bias(params_[weight + 1].value, y);
  return y;
}

kernels::AttentionGeometry TransformerLayer::geometry_for(const ForwardContext& context) const {
  kernels::AttentionGeometry g = geometry_;
  if (dropout_ > 0.0f && context.training) {
    g.dropout = dropout_;
    g.stream = kernels::dropout_stream(context.seed, context.layer_index, context.first_sample,
                                       geometry_.heads * tokens_ * tokens_);
  }
  return g;
}

// x + proj(attention(norm1(x))), keeping what the backward reads.
Tensor TransformerLayer::attention_half(const Tensor& xt, LayerSaved& saved) {
  const int64_t rows = xt.rows();
  Tensor ln1 = backend_.empty(rows, dim_);
  Tensor mean1 = backend_.empty(rows, 1);
  Tensor rstd1 = backend_.empty(rows, 1);
  backend_.layernorm_forward(xt, p(kNorm1W).value, p(kNorm1B).value, eps_, ln1, mean1, rstd1);
  Tensor qkv = linear(ln1, kQkvW);
  Tensor attn = backend_.empty(rows, dim_);
  Tensor probs = backend_.empty(rows / tokens_, geometry_.heads * tokens_ * tokens_);
  backend_.attention_forward(geometry_for(saved.context), qkv, attn, probs);
  Tensor x1 = linear(attn, kProjW);
  backend_.axpy(1.0f, xt, x1);
  for (Tensor* t : {&mean1, &rstd1, &ln1, &qkv, &probs, &attn}) saved.tensors.push_back(std::move(*t));
  return x1;
}

// x1 + fc2(GELU(fc1(norm2(x1)))).
Tensor TransformerLayer::mlp_half(Tensor x1, LayerSaved& saved) {
  const int64_t rows = x1.rows();
  Tensor ln2 = backend_.empty(rows, dim_);
  Tensor mean2 = backend_.empty(rows, 1);
  Tensor rstd2 = backend_.empty(rows, 1);
  backend_.layernorm_forward(x1, p(kNorm2W).value, p(kNorm2B).value, eps_, ln2, mean2, rstd2);
  Tensor pre = backend_.empty(rows, hidden_);
  backend_.gemm(Transpose::kNo, Transpose::kYes, 1.0f, ln2, p(kFc1W).value, 0.0f, pre);
  Tensor hidden = backend_.empty(rows, hidden_);
  backend_.bias_activation_forward(kernels::Activation::kGelu, p(kFc1B).value, pre, hidden);
  Tensor x2 = linear(hidden, kFc2W);
  backend_.axpy(1.0f, x1, x2);
  for (Tensor* t : {&x1, &mean2, &rstd2, &ln2, &pre, &hidden}) saved.tensors.push_back(std::move(*t));
  return x2;
}

Tensor TransformerLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  saved.context = context;  // the backward draws the attention dropout's mask again from it
  saved.tensors.clear();
  Tensor xt = backend_.empty(x.rows() * tokens_, dim_);
  backend_.tokens_to_rows(dim_, tokens_, x, xt);
  saved.tensors.push_back(Tensor());  // kX, filled once attention_half has read it
  Tensor x1 = attention_half(xt, saved);
  saved.tensors[kX] = std::move(xt);
  const Tensor x2 = mlp_half(std::move(x1), saved);
  Tensor y = backend_.empty(x.rows(), dim_ * tokens_);
  backend_.rows_to_tokens(dim_, tokens_, x2, y);
  return y;
}

}  // namespace sluice::model
