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

}  // namespace sluice::model
