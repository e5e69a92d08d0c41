#include "kernels/cuda/cudnn_descriptors.h"

#include <climits>
#include <string>

#include "core/common/error.h"
#include "kernels/cuda/cudnn_check.h"

namespace sluice::kernels {
namespace {

int as_cudnn_int(int64_t value, const char* what) {
  if (value < 0 || value > INT_MAX) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("cuDNN field op: ") + what + " = " + std::to_string(value) + " is outside cuDNN's int range");
  }
  return static_cast<int>(value);
}

// Packed strides of a C-order tensor with these dimensions.
std::vector<int> packed_strides(const std::vector<int>& dims) {
  std::vector<int> strides(dims.size(), 1);
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = as_cudnn_int(stride, "tensor stride");
    stride *= dims[i];
  }
  return strides;
}

}  // namespace

std::vector<int> cudnn_dims(const std::vector<int64_t>& values, int leading, const char* what) {
  std::vector<int> dims;
  if (values.size() == 1) dims.push_back(leading);
  for (int64_t v : values) dims.push_back(as_cudnn_int(v, what));
  return dims;
}

TensorDescriptor::TensorDescriptor(int64_t samples, int64_t channels, const std::vector<int64_t>& extents) {
  std::vector<int> dims = {as_cudnn_int(samples, "samples"), as_cudnn_int(channels, "channels")};
  for (int d : cudnn_dims(extents, 1, "field extent")) dims.push_back(d);
  const std::vector<int> strides = packed_strides(dims);
  check_cudnn(cudnnCreateTensorDescriptor(&descriptor_), "cudnnCreateTensorDescriptor");
  try {
    check_cudnn(cudnnSetTensorNdDescriptor(descriptor_, CUDNN_DATA_FLOAT, static_cast<int>(dims.size()), dims.data(),
                                           strides.data()),
                "cudnnSetTensorNdDescriptor");
  } catch (...) {
    cudnnDestroyTensorDescriptor(descriptor_);
    throw;
  }
}

TensorDescriptor TensorDescriptor::channel_vector(int64_t channels, size_t spatial_dims) {
  return TensorDescriptor(1, channels, std::vector<int64_t>(spatial_dims, 1));
}

TensorDescriptor::~TensorDescriptor() {
  if (descriptor_ != nullptr) cudnnDestroyTensorDescriptor(descriptor_);
}

TensorDescriptor::TensorDescriptor(TensorDescriptor&& other) noexcept : descriptor_(other.descriptor_) {
  other.descriptor_ = nullptr;
}

FilterDescriptor::FilterDescriptor(int64_t out_channels, int64_t in_channels_per_group,
                                   const std::vector<int64_t>& kernel) {
  std::vector<int> dims = {as_cudnn_int(out_channels, "filter output channels"),
                           as_cudnn_int(in_channels_per_group, "filter input channels")};
  for (int d : cudnn_dims(kernel, 1, "kernel extent")) dims.push_back(d);
  check_cudnn(cudnnCreateFilterDescriptor(&descriptor_), "cudnnCreateFilterDescriptor");
  try {
    check_cudnn(cudnnSetFilterNdDescriptor(descriptor_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                           static_cast<int>(dims.size()), dims.data()),
                "cudnnSetFilterNdDescriptor");
  } catch (...) {
    cudnnDestroyFilterDescriptor(descriptor_);
    throw;
  }
}

FilterDescriptor::~FilterDescriptor() {
  if (descriptor_ != nullptr) cudnnDestroyFilterDescriptor(descriptor_);
}

ConvolutionDescriptor::ConvolutionDescriptor(const std::vector<int64_t>& pad, const std::vector<int64_t>& stride,
                                             const std::vector<int64_t>& dilation, int64_t groups,
                                             cudnnMathType_t math) {
  const std::vector<int> pads = cudnn_dims(pad, 0, "padding");
  const std::vector<int> strides = cudnn_dims(stride, 1, "stride");
  const std::vector<int> dilations = cudnn_dims(dilation, 1, "dilation");
  check_cudnn(cudnnCreateConvolutionDescriptor(&descriptor_), "cudnnCreateConvolutionDescriptor");
  try {
    check_cudnn(cudnnSetConvolutionNdDescriptor(descriptor_, static_cast<int>(pads.size()), pads.data(),
                                                strides.data(), dilations.data(), CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT),
                "cudnnSetConvolutionNdDescriptor");
    check_cudnn(cudnnSetConvolutionGroupCount(descriptor_, as_cudnn_int(groups, "groups")),
                "cudnnSetConvolutionGroupCount");
    set_math(math);
  } catch (...) {
    cudnnDestroyConvolutionDescriptor(descriptor_);
    throw;
  }
}

void ConvolutionDescriptor::set_math(cudnnMathType_t math) {
  check_cudnn(cudnnSetConvolutionMathType(descriptor_, math), "cudnnSetConvolutionMathType");
}

ConvolutionDescriptor::~ConvolutionDescriptor() {
  if (descriptor_ != nullptr) cudnnDestroyConvolutionDescriptor(descriptor_);
}

PoolingDescriptor::PoolingDescriptor(PoolMode mode, const std::vector<int64_t>& kernel) {
  const std::vector<int> window = cudnn_dims(kernel, 1, "pool kernel");
  const std::vector<int> padding(window.size(), 0);
  // Average windows never reach padding here, so INCLUDE and EXCLUDE padding agree; INCLUDE is the plain mean.
  const cudnnPoolingMode_t cudnn_mode =
      mode == PoolMode::kMax ? CUDNN_POOLING_MAX_DETERMINISTIC : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  check_cudnn(cudnnCreatePoolingDescriptor(&descriptor_), "cudnnCreatePoolingDescriptor");
  try {
    // A NaN in a window is the window's max, as in PyTorch's max_pool.
    check_cudnn(cudnnSetPoolingNdDescriptor(descriptor_, cudnn_mode, CUDNN_PROPAGATE_NAN,
                                            static_cast<int>(window.size()), window.data(), padding.data(),
                                            window.data()),
                "cudnnSetPoolingNdDescriptor");
  } catch (...) {
    cudnnDestroyPoolingDescriptor(descriptor_);
    throw;
  }
}

PoolingDescriptor::~PoolingDescriptor() {
  if (descriptor_ != nullptr) cudnnDestroyPoolingDescriptor(descriptor_);
}

}  // namespace sluice::kernels
