// Owning wrappers of cuDNN's descriptors, built from Sluice's field shapes. A field tensor [samples][C · Π extents]
// is row-major NC(D)(H)W, fully packed, as cuDNN's NCHW / NCDHW; cuDNN takes 4-D and 5-D tensors only, so a 1-D
// field is a 2-D one of height 1 (cudnn_dims), as oneDNN is given it on the CPU. Every cuDNN call is checked
// (check_cudnn), and a size beyond cuDNN's int range throws Error(kInvalidArgument) naming it.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <vector>

#include "kernels/conv_geometry.h"

namespace sluice::kernels {

// Per-dimension values for cuDNN: 1-D becomes 2-D with `leading` as the height's value (1 for extents, kernels,
// strides and dilations; 0 for padding); 2-D and 3-D are copied.
std::vector<int> cudnn_dims(const std::vector<int64_t>& values, int leading, const char* what);

class TensorDescriptor {
 public:
  // A packed float tensor [samples][channels][extents...].
  TensorDescriptor(int64_t samples, int64_t channels, const std::vector<int64_t>& extents);
  // The [1][channels][1...] tensor of a per-channel bias over fields with `spatial_dims` dimensions.
  static TensorDescriptor channel_vector(int64_t channels, size_t spatial_dims);
  ~TensorDescriptor();
  TensorDescriptor(TensorDescriptor&& other) noexcept;
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  cudnnTensorDescriptor_t get() const { return descriptor_; }

 private:
  cudnnTensorDescriptor_t descriptor_ = nullptr;
};

class FilterDescriptor {
 public:
  // A float filter [out_channels][in_channels_per_group][kernel...] (PyTorch's conv weight layout).
  FilterDescriptor(int64_t out_channels, int64_t in_channels_per_group, const std::vector<int64_t>& kernel);
  ~FilterDescriptor();
  FilterDescriptor(const FilterDescriptor&) = delete;
  FilterDescriptor& operator=(const FilterDescriptor&) = delete;
  cudnnFilterDescriptor_t get() const { return descriptor_; }

 private:
  cudnnFilterDescriptor_t descriptor_ = nullptr;
};

// A cross-correlation (PyTorch's convolution) in fp32 with symmetric padding `pad` per dimension.
class ConvolutionDescriptor {
 public:
  ConvolutionDescriptor(const std::vector<int64_t>& pad, const std::vector<int64_t>& stride,
                        const std::vector<int64_t>& dilation, int64_t groups, cudnnMathType_t math);
  ~ConvolutionDescriptor();
  ConvolutionDescriptor(const ConvolutionDescriptor&) = delete;
  ConvolutionDescriptor& operator=(const ConvolutionDescriptor&) = delete;
  cudnnConvolutionDescriptor_t get() const { return descriptor_; }
  void set_math(cudnnMathType_t math);

 private:
  cudnnConvolutionDescriptor_t descriptor_ = nullptr;
};

// Non-overlapping windows, stride = kernel, no padding (kernels/conv_geometry.h's PoolGeometry). Max pooling is
// CUDNN_POOLING_MAX_DETERMINISTIC: plain CUDNN_POOLING_MAX's backward may add with atomics.
class PoolingDescriptor {
 public:
  PoolingDescriptor(PoolMode mode, const std::vector<int64_t>& kernel);
  ~PoolingDescriptor();
  PoolingDescriptor(const PoolingDescriptor&) = delete;
  PoolingDescriptor& operator=(const PoolingDescriptor&) = delete;
  cudnnPoolingDescriptor_t get() const { return descriptor_; }

 private:
  cudnnPoolingDescriptor_t descriptor_ = nullptr;
};

}  // namespace sluice::kernels
