// Host-callable launchers for field_index.cu, resample.cu, field_norm.cu and field_loss.cu: index maps around the cuDNN field ops
// (explicit zero padding and its crop, periodic/reflect padding, column blocks of skip connections), upsampling and
// the field normalizations and the per-point cross-entropy. The copies and the padding are the CPU's bits (its order of additions); upsampling and
// the norms agree to rounding, and repeat bit for bit (no atomics). Each launcher
// checks its launch and throws Error(kCuda) naming the kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/conv_geometry.h"

namespace sluice::kernels::cuda_launch {

// Up to three spatial dimensions, unused leading ones 1 (extents) or 0 (offsets).
struct FieldBox {
  int64_t extent[3] = {1, 1, 1};
};

// For each of `planes` (samples · channels) planes: dst[p][i] = src[p][i − offset] where every coordinate of
// i − offset lies inside src's extents, else 0. A positive offset zero-pads (offset = the low padding), a negative
// one crops (the adjoint of that padding for the dx of a padded convolution).
void window_copy(const float* src, const FieldBox& src_extents, float* dst, const FieldBox& dst_extents,
                 const FieldBox& offset, int64_t planes, cudaStream_t stream);

// Periodic or reflect padding (kernels/conv_geometry.h's PadGeometry, the CPU's index rule) of `planes` planes.
void pad_forward(PadMode mode, const float* x, const FieldBox& in, const FieldBox& low, float* y,
                 const FieldBox& padded, int64_t planes, cudaStream_t stream);
// Its adjoint as a gather: each dx element sums the dy elements copied from it, in ascending padded order
// starting from 0, which is the CPU's order of additions (it scatters in padded order), so the bits are the CPU's.
void pad_backward(PadMode mode, const float* dy, const FieldBox& padded, const FieldBox& low, float* dx,
                  const FieldBox& in, int64_t planes, cudaStream_t stream);

// Upsampling (resample.cu): `in` the source extents, `factor` the integer factors (1 for unused dimensions).
void resample_forward(ResampleMode mode, const float* x, const FieldBox& in, const FieldBox& factor, float* y,
                      int64_t planes, cudaStream_t stream);
// dx = the adjoint for dy, a gather (overwrites dx).
void resample_backward(ResampleMode mode, const float* dy, const FieldBox& in, const FieldBox& factor, float* dx,
                       int64_t planes, cudaStream_t stream);

// Normalizations of fields (field_norm.cu), the CPU's "sets" (kernels/cpu/cpu_field_norm.cc): set s of a sample
// holds its elements s · set_stride + k · element_stride, k < size; the element at sample offset o is in channel
// o / points. Group norm: sets = groups, size = set_stride = channels / groups · points, element_stride = 1.
// Layernorm over the channels at each point: sets = points, size = channels, set_stride = 1,
// element_stride = points, per_point = true. mean and rstd are [samples][sets].
struct NormSets {
  int64_t sets = 0;
  int64_t size = 0;
  int64_t set_stride = 0;
  int64_t element_stride = 0;
  int64_t points = 1;
  int64_t features = 0;  // per sample
  float eps = 0.0f;
  bool per_point = false;  // the set of offset o is o % points (else o / set_stride)
};
void norm_forward(const NormSets& sets, int64_t samples, const float* x, const float* weight, const float* bias,
                  float* y, float* mean, float* rstd, cudaStream_t stream);
void norm_backward_input(const NormSets& sets, int64_t samples, const float* dy, const float* x, const float* weight,
                         const float* mean, const float* rstd, float* dx, cudaStream_t stream);
// weight_grad[c] += Σ dy · x̂, bias_grad[c] += Σ dy over samples and points.
void norm_param_grads(const NormSets& sets, int64_t samples, int64_t channels, const float* dy, const float* x,
                      const float* mean, const float* rstd, float* weight_grad, float* bias_grad,
                      cudaStream_t stream);

// Group norm in pieces (kernels/tiled_norm.h), group sets only: per sample and group, 2 doubles into host_sums
// ([samples · sets][2]; Σ x and Σ (x − its mean)², or Σ g and Σ g · x̂), synchronising the stream; and the
// normalization and dx with given per-set statistics, element by element.
void group_norm_partial_sums(const NormSets& sets, int64_t samples, const float* x, double* host_sums,
                             cudaStream_t stream);
void group_norm_backward_partial_sums(const NormSets& sets, int64_t samples, const float* dy, const float* x,
                                      const float* weight, const float* mean, const float* rstd, double* host_sums,
                                      cudaStream_t stream);
void group_norm_normalize(const NormSets& sets, int64_t samples, const float* x, const float* weight,
                          const float* bias, const float* mean, const float* rstd, float* y, cudaStream_t stream);
void group_norm_backward_with_sums(const NormSets& sets, int64_t samples, const float* dy, const float* x,
                                   const float* weight, const float* mean, const float* rstd, const float* mean_g,
                                   const float* mean_g_xhat, float* dx, cudaStream_t stream);

// The softmax cross-entropy over the channels at each point (field_loss.cu): logits, target and grad are
// [rows][channels · points]. Returns the sum over rows and points; synchronises the stream.
double channel_softmax_cross_entropy(const float* logits, const float* target, float grad_scale, float* grad,
                                     int64_t rows, int64_t channels, int64_t points, cudaStream_t stream);

// destination[r][destination_col + j] = (add: +=) source[r][source_col + j] for r < rows, j < count.
void copy_columns(const float* source, int64_t source_cols, int64_t source_col, float* destination,
                  int64_t destination_cols, int64_t destination_col, int64_t rows, int64_t count, bool add,
                  cudaStream_t stream);

}  // namespace sluice::kernels::cuda_launch
