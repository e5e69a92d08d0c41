// One sample's convolution through oneDNN's convolution primitives, on the calling thread alone.
//
// Why one sample per call: a sample's output (and input gradient) is then computed the same way whatever batch it
// arrives in, whatever the thread count and whichever thread runs it, so the pipelined run, the sequential reference,
// predict on any batch size and a resume on other cores give the same bits. The weight gradient is one partial per
// sample that the caller adds up in sample order (kernels/cpu/cpu_conv.cc).
#pragma once

#include "kernels/conv_geometry.h"

namespace sluice::kernels {

// y[out_features] = conv(x[in_features], weight) (+ bias[out_channels] when not null). `geometry` is complete.
void onednn_conv_forward(const ConvGeometry& geometry, const float* x, const float* weight, const float* bias,
                         float* y);
// dx[in_features] = dL/dx for dy[out_features] (overwritten).
void onednn_conv_backward_data(const ConvGeometry& geometry, const float* dy, const float* weight, float* dx);
// weight_grad[out_channels * weight_cols] and bias_grad[out_channels] (when not null) = this sample's contribution
// (overwritten, not added).
void onednn_conv_backward_weights(const ConvGeometry& geometry, const float* x, const float* dy, float* weight_grad,
                                  float* bias_grad);

}  // namespace sluice::kernels
