// The per-sample FLOP and parameter counts of the built-in layers, in one place: the layers report them
// (Layer::flops_per_sample) and model_shape.h computes them from the config alone, before anything is allocated,
// so the partition and the rank-order choice see the same numbers either way.
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/conv_geometry.h"
#include "kernels/spectral_geometry.h"

namespace sluice::model {

// forward, input gradient and weight gradient are one multiply-add per weight each
inline double dense_flops(int64_t in, int64_t out) { return 6.0 * static_cast<double>(in) * static_cast<double>(out); }
inline int64_t dense_params(int64_t in, int64_t out, bool bias) { return in * out + (bias ? out : 0); }

// A few flops per element (tanh/GELU more than ReLU); enough to keep element-wise layers from being free.
inline double activation_flops(kernels::Activation activation, int64_t features) {
  return (activation == kernels::Activation::kRelu ? 2.0 : 20.0) * static_cast<double>(features);
}
inline double dropout_flops(int64_t features) { return 10.0 * static_cast<double>(features); }
inline double layernorm_flops(int64_t features) { return 20.0 * static_cast<double>(features); }
inline int64_t layernorm_params(int64_t features) { return 2 * features; }  // gamma and beta

// group_norm, instance_norm and layernorm on a field: a layernorm's work per element, weight and bias per channel.
inline double field_norm_flops(int64_t features) { return layernorm_flops(features); }
inline int64_t field_norm_params(int64_t channels) { return 2 * channels; }

// Linear(features -> hidden) -> activation -> Linear(hidden -> features), both with bias, plus the skip.
inline double residual_mlp_flops(int64_t features, int64_t hidden) {
  return dense_flops(features, hidden) + dense_flops(hidden, features) + 20.0 * static_cast<double>(hidden);
}
inline int64_t residual_mlp_params(int64_t features, int64_t hidden) {
  return dense_params(features, hidden, true) + dense_params(hidden, features, true);
}

// Each output element is in/groups · Π kernel multiply-adds, for the forward, the input gradient and the weight
// gradient each (as a dense layer's).
inline double conv_flops(const kernels::ConvGeometry& g) {
  return 6.0 * static_cast<double>(g.out_features()) * static_cast<double>(g.weight_cols());
}
inline int64_t conv_params(const kernels::ConvGeometry& g, bool bias) {
  return g.out_channels * g.weight_cols() + (bias ? g.out_channels : 0);
}

// Each input element meets out · Π kernel weights, for the forward, the input gradient and the weight gradient each.
inline double deconv_flops(const kernels::DeconvGeometry& g) {
  return 6.0 * static_cast<double>(g.in_features()) * static_cast<double>(g.weight_cols());
}
inline int64_t deconv_params(const kernels::DeconvGeometry& g, bool bias) {
  return g.in_channels * g.weight_cols() + (bias ? g.out_channels : 0);
}

// Every input element is read once by the forward and once by the backward (max pooling's backward runs the
// forward again: one more).
inline double pool_flops(const kernels::PoolGeometry& g) {
  return (g.mode == kernels::PoolMode::kMax ? 3.0 : 2.0) * static_cast<double>(g.in_features());
}
// Each output element is 1 (nearest) or 2^dims (linear) weighted reads, forward and backward.
inline double resample_flops(const kernels::ResampleGeometry& g) {
  const double reads = g.mode == kernels::ResampleMode::kNearest ? 1.0 : static_cast<double>(1 << g.in.size());
  return 2.0 * 2.0 * reads * static_cast<double>(g.out_features());
}

// A spectral convolution: a transform of ~5·N·log2(N) per channel each way (N points) and the complex mixing,
// 8·in·out per kept mode; the forward, the input gradient and the weight gradient each transform every input and
// output channel once and mix once.
inline double spectral_flops(const kernels::SpectralGeometry& g) {
  const double n = static_cast<double>(g.points());
  double log2_n = 0.0;
  for (int64_t e = g.points(); e > 1; e /= 2) log2_n += 1.0;
  const double transforms = 5.0 * n * log2_n * static_cast<double>(g.in_channels + g.out_channels);
  const double mixing = 8.0 * static_cast<double>(g.in_channels) * static_cast<double>(g.out_channels) *
                        static_cast<double>(g.kept_modes());
  return 3.0 * (transforms + mixing);
}
inline int64_t spectral_params(const kernels::SpectralGeometry& g) { return g.in_channels * g.weight_cols(); }

// fno_block: the spectral convolution, a 1 × 1 convolution with bias (a dense layer at each point), the sum and GELU.
inline double fno_block_flops(const kernels::SpectralGeometry& g) {
  return spectral_flops(g) + 6.0 * static_cast<double>(g.in_channels) * static_cast<double>(g.out_features()) +
         20.0 * static_cast<double>(g.out_features());
}
inline int64_t fno_block_params(const kernels::SpectralGeometry& g) {
  return spectral_params(g) + g.in_channels * g.out_channels + g.out_channels;
}

// patch_embed: its convolution, and the position embedding's add (forward) and sum (weight gradient).
inline double patch_embed_flops(const kernels::ConvGeometry& g) {
  return conv_flops(g) + 2.0 * static_cast<double>(g.out_features());
}
inline int64_t patch_embed_params(const kernels::ConvGeometry& g) { return conv_params(g, true) + g.out_features(); }

// transformer on T tokens of D features: per token the qkv, proj, fc1 and fc2 maps (dense layers' F + I + W), per
// sample and head q·kᵀ and p·v (2·T²·D/H multiply-adds each, 2 flops each, forward; the backward's four products
// twice that), plus the two norms, GELU and the softmax element-wise.
inline double transformer_flops(int64_t dim, int64_t tokens, int64_t heads, int64_t hidden) {
  const double t = static_cast<double>(tokens);
  const double maps = dense_flops(dim, 3 * dim) + dense_flops(dim, dim) + dense_flops(dim, hidden) +
                      dense_flops(hidden, dim);
  const double attention = 3.0 * 2.0 * 2.0 * t * t * static_cast<double>(dim);
  const double elementwise = 2.0 * layernorm_flops(dim) + activation_flops(kernels::Activation::kGelu, hidden);
  return t * (maps + elementwise) + attention + 10.0 * static_cast<double>(heads) * t * t;
}
// What one sample's forward keeps for the backward (TransformerLayer's saved tensors): per token the input, both
// norms' outputs and statistics, qkv, the attention output, the first residual, the MLP's pre-activation and
// activation; per head the T × T probabilities.
inline double transformer_stash_bytes(int64_t dim, int64_t tokens, int64_t heads, int64_t hidden) {
  const double t = static_cast<double>(tokens);
  const double per_token = 8.0 * static_cast<double>(dim) + 4.0 + 2.0 * static_cast<double>(hidden);
  return 4.0 * (t * per_token + static_cast<double>(heads) * t * t);
}
inline int64_t transformer_params(int64_t dim, int64_t hidden) {
  return 2 * layernorm_params(dim) + dense_params(dim, 3 * dim, true) + dense_params(dim, dim, true) +
         dense_params(dim, hidden, true) + dense_params(hidden, dim, true);
}

}  // namespace sluice::model
