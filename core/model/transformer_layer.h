// transformer: timm's pre-norm ViT `Block` on tokens, x = x + proj(attention(norm1(x))); x = x + fc2(GELU(fc1(
// norm2(x)))), with GELU's tanh form and optional attention dropout. Tokens are held as Sluice's [D, T] fields (a sample's element
// (d, t) at d·T + t, channel-first, so a field layernorm normalizes each token); inside the block they are turned to
// one row per token ([samples·T][D], Backend::tokens_to_rows), where every linear map is one product over all the
// rows (as a linear layer's) and attention is Backend::attention_forward, per sample and head. Parameters are named
// and shaped as timm's: norm1.weight/bias [D], attn.qkv.weight [3D, D] + bias [3D], attn.proj.weight [D, D] + bias,
// norm2.weight/bias, mlp.fc1.weight [mlp_ratio·D, D] + bias, mlp.fc2.weight [D, mlp_ratio·D] + bias.
#pragma once

#include <array>

#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

class TransformerLayer : public Layer {
 public:
  // dim D and tokens T of the [D, T] input; heads divide dim (checked by the config's shape rule).
  // `dropout`: timm's attn_drop on the attention probabilities (0 <= dropout < 1), only while training; each
  // mask element is keyed by (seed, layer, global sample, head, query, key), so layouts and recomputes agree.
  TransformerLayer(kernels::Backend& backend, int64_t dim, int64_t tokens, int64_t heads, int64_t mlp_ratio,
                   float eps, float dropout = 0.0f);

  std::string type() const override { return "transformer"; }
  int64_t in_features() const override { return dim_ * tokens_; }
  int64_t out_features() const override { return dim_ * tokens_; }
  double flops_per_sample() const override;
  double stash_bytes_per_sample() const override;  // the probabilities grow as T²: far more than the input
  std::vector<Parameter*> parameters() override;
  // PyTorch's defaults: each linear map's weight and bias uniform in ±1/√in, the norms 1 and 0.
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  // The parameters, in the order parameters() lists them (and init draws their streams).
  enum Index { kNorm1W, kNorm1B, kQkvW, kQkvB, kProjW, kProjB, kNorm2W, kNorm2B, kFc1W, kFc1B, kFc2W, kFc2B, kCount };
  // saved.tensors (token rows [samples·T][..]) and saved.weight_grad_inputs (the gradient reaching each map's
  // output) layouts.
  enum Saved : size_t { kX, kMean1, kRstd1, kLn1, kQkv, kProbs, kAttn, kX1, kMean2, kRstd2, kLn2, kPre, kHidden };
  enum Grads : size_t { kDy, kDPre, kDLn2, kDx1, kDQkv, kDLn1 };
  Parameter& p(Index index) { return params_[index]; }
  void add_parameter(Index index, const char* name, int64_t rows, int64_t cols);
  // y = x wᵀ + b over rows (a linear map on each token).
  kernels::Tensor linear(const kernels::Tensor& x, Index weight);
  void accumulate_linear(const kernels::Tensor& dy, const kernels::Tensor& x, Index weight);
  kernels::Tensor attention_half(const kernels::Tensor& xt, LayerSaved& saved);
  // The attention's geometry for a micro-batch run under `context` (its dropout only while training).
  kernels::AttentionGeometry geometry_for(const ForwardContext& context) const;
  kernels::Tensor mlp_half(kernels::Tensor x1, LayerSaved& saved);

  kernels::Backend& backend_;
  int64_t dim_, tokens_, hidden_;
  kernels::AttentionGeometry geometry_;
  float eps_;
  float dropout_;
  std::array<Parameter, kCount> params_;
};

}  // namespace sluice::model
