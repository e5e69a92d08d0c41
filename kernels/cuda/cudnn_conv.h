// Convolutions through cuDNN's convolution API, shared by the conv and deconv ops of CudaBackend
// (cuda_field_ops.cc): a transposed convolution is a convolution's backward-data, and its gradients the
// convolution's forward and backward-filter with the roles of input and output swapped.
// Determinism: algorithms are chosen by cuDNN's heuristics (cudnnGetConvolution*Algorithm_v7: a function of the
// shapes and the device, never of timings), keeping only results with determinism == CUDNN_DETERMINISTIC, so
// every run and every replica on the same GPU model computes the same bits; cudnnFind* (which times the
// candidates) is never used. Math: fp32 runs in CUDNN_FMA_MATH (CUDNN_DEFAULT_MATH would let Ampere and later
// GPUs use TF32 tensor cores); gemm_precision tf32 or bf16 lets the heuristics pick tensor-core (TF32) algorithms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/cudnn_context.h"
#include "kernels/cuda/cudnn_descriptors.h"
#include "kernels/gemm_precision.h"

namespace sluice::kernels {

// One convolution as cuDNN computes it: y = conv(x, w), with symmetric implicit zero padding `pad`.
struct CudnnConvShape {
  int64_t samples = 0;
  int64_t x_channels = 0;
  int64_t y_channels = 0;
  int64_t groups = 1;
  std::vector<int64_t> x_extents;
  std::vector<int64_t> y_extents;
  std::vector<int64_t> kernel;
  std::vector<int64_t> pad;
  std::vector<int64_t> stride;
  std::vector<int64_t> dilation;
};

class CudnnConvProblem {
 public:
  CudnnConvProblem(const CudnnConvShape& shape, GemmPrecision precision);

  TensorDescriptor x;
  TensorDescriptor y;
  FilterDescriptor w;  // [y_channels][x_channels / groups][kernel...]
  ConvolutionDescriptor conv;
  const std::string key;  // every size and the precision: the algorithm cache's key
  const bool tensor_ops;  // whether TF32 tensor-core algorithms may be chosen
};

// y = conv(x, w) (overwrites y).
void cudnn_conv_forward(CudnnContext& context, CudnnConvProblem& problem, const float* x, const float* w, float* y);
// dx = the convolution's adjoint applied to dy (overwrites dx).
void cudnn_conv_backward_data(CudnnContext& context, CudnnConvProblem& problem, const float* w, const float* dy,
                              float* dx);
// dw += dL/dw for dL/dy = dy (cuDNN's beta = 1).
void cudnn_conv_backward_filter(CudnnContext& context, CudnnConvProblem& problem, const float* x, const float* dy,
                                float* dw);

// y[n][c][...] += bias[c] (y described by `y_desc`, channels `channels`, `spatial_dims` field dimensions).
void cudnn_add_channel_bias(CudnnContext& context, const TensorDescriptor& y_desc, int64_t channels,
                            size_t spatial_dims, const float* bias, float* y);
// bias_grad[c] += Σ over samples and points of dy[n][c][...] (cudnnConvolutionBackwardBias, beta = 1: a
// reduction cuDNN's reproducibility notes do not list among the non-deterministic routines).
void cudnn_accumulate_channel_bias_grad(CudnnContext& context, const TensorDescriptor& dy_desc, int64_t channels,
                                        size_t spatial_dims, const float* dy, float* bias_grad);

}  // namespace sluice::kernels
