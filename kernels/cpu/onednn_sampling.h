// One sample's pooling, upsampling and transposed convolution through oneDNN's primitives (pooling, resampling,
// deconvolution), on the calling thread alone: one sample per call for the reasons kernels/cpu/onednn_conv.h gives.
#pragma once

#include "kernels/conv_geometry.h"

namespace sluice::kernels {

// y[out_features] = pool(x[in_features]).
void onednn_pool_forward(const PoolGeometry& geometry, const float* x, float* y);
// dx[in_features] = dL/dx for dy[out_features] (overwritten). Max pooling runs the forward on `x` again for the
// places of the maxima (its workspace), so nothing but the input is kept between forward and backward.
void onednn_pool_backward(const PoolGeometry& geometry, const float* x, const float* dy, float* dx);

void onednn_resample_forward(const ResampleGeometry& geometry, const float* x, float* y);
void onednn_resample_backward(const ResampleGeometry& geometry, const float* dy, float* dx);

// y = conv_transpose(x, weight) (+ bias when not null); weight [in][out][k..] as PyTorch's.
void onednn_deconv_forward(const DeconvGeometry& geometry, const float* x, const float* weight, const float* bias,
                           float* y);
void onednn_deconv_backward_data(const DeconvGeometry& geometry, const float* dy, const float* weight, float* dx);
// This sample's weight (and bias, when not null) gradients, overwritten.
void onednn_deconv_backward_weights(const DeconvGeometry& geometry, const float* x, const float* dy,
                                    float* weight_grad, float* bias_grad);

}  // namespace sluice::kernels
