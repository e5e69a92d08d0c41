// CudaBackend's field ops (operands checked by Backend): convolution and transposed convolution through cuDNN
// (cudnn_conv.h), pooling through cuDNN, column blocks and periodic/reflect padding through field_index.cu,
// upsampling through resample.cu.
// cuDNN pads symmetrically only; a convolution whose low and high padding differ (padding 'same' with an even
// kernel) runs on an explicitly zero-padded copy of its input, and its dx is computed on the padded extents and
// cropped (cuda_launch::window_copy), so every geometry the CPU takes runs here too.
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cudnn_check.h"
#include "kernels/cuda/cudnn_context.h"
#include "kernels/cuda/cudnn_conv.h"
#include "kernels/cuda/cudnn_descriptors.h"
#include "kernels/cuda/field_launch.h"

namespace sluice::kernels {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

int64_t product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (int64_t v : values) p *= v;
  return p;
}

bool symmetric_padding(const ConvGeometry& g) { return g.pad_low == g.pad_high; }

// The input extents cuDNN convolves: the field's, or with the asymmetric padding made explicit.
std::vector<int64_t> cudnn_input_extents(const ConvGeometry& g) {
  if (symmetric_padding(g)) return g.in;
  std::vector<int64_t> padded = g.in;
  for (size_t d = 0; d < padded.size(); ++d) padded[d] += g.pad_low[d] + g.pad_high[d];
  return padded;
}

CudnnConvShape conv_shape(const ConvGeometry& g, int64_t samples) {
  CudnnConvShape shape;
  shape.samples = samples;
  shape.x_channels = g.in_channels;
  shape.y_channels = g.out_channels;
  shape.groups = g.groups;
  shape.x_extents = cudnn_input_extents(g);
  shape.y_extents = g.out;
  shape.kernel = g.kernel;
  shape.pad = symmetric_padding(g) ? g.pad_low : std::vector<int64_t>(g.in.size(), 0);
  shape.stride = g.stride;
  shape.dilation = g.dilation;
  return shape;
}

// The convolution a transposed convolution is the adjoint of: from the deconv's output to its input.
CudnnConvShape deconv_shape(const DeconvGeometry& g, int64_t samples) {
  CudnnConvShape shape;
  shape.samples = samples;
  shape.x_channels = g.out_channels;
  shape.y_channels = g.in_channels;
  shape.x_extents = g.out();
  shape.y_extents = g.in;
  shape.kernel = g.kernel;
  shape.pad = std::vector<int64_t>(g.in.size(), 0);
  shape.stride = g.stride;
  shape.dilation = std::vector<int64_t>(g.in.size(), 1);
  return shape;
}

// Right-aligned into cuda_launch's three dimensions.
cuda_launch::FieldBox box(const std::vector<int64_t>& values, int64_t fill) {
  cuda_launch::FieldBox b;
  const size_t skip = 3 - values.size();
  for (size_t d = 0; d < 3; ++d) b.extent[d] = d < skip ? fill : values[d - skip];
  return b;
}

std::vector<int64_t> negated(const std::vector<int64_t>& values) {
  std::vector<int64_t> result = values;
  for (int64_t& v : result) v = -v;
  return result;
}

}  // namespace

CudnnContext& CudaBackend::cudnn() {
  if (!cudnn_) cudnn_ = std::make_unique<CudnnContext>(stream_);
  return *cudnn_;
}

// x zero-padded to the extents cuDNN convolves, for a convolution with asymmetric padding.
Tensor CudaBackend::explicitly_padded(const ConvGeometry& g, const Tensor& x) {
  const std::vector<int64_t> padded = cudnn_input_extents(g);
  Tensor result = empty(x.rows(), g.in_channels * product(padded));
  cuda_launch::window_copy(x.data(), box(g.in, 1), result.data(), box(padded, 1), box(g.pad_low, 0),
                           x.rows() * g.in_channels, stream_);
  return result;
}

void CudaBackend::conv_forward_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& weight,
                                    const Tensor* bias, Tensor& y) {
  if (x.rows() == 0) return;
  CudnnConvProblem problem(conv_shape(geometry, x.rows()), precision_);
  if (symmetric_padding(geometry)) {
    cudnn_conv_forward(cudnn(), problem, x.data(), weight.data(), y.data());
  } else {
    const Tensor padded = explicitly_padded(geometry, x);
    cudnn_conv_forward(cudnn(), problem, padded.data(), weight.data(), y.data());
  }
  if (bias != nullptr) {
    cudnn_add_channel_bias(cudnn(), problem.y, geometry.out_channels, geometry.dims(), bias->data(), y.data());
  }
}

void CudaBackend::conv_backward_data_impl(const ConvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                          Tensor& dx) {
  if (dy.rows() == 0) return;
  CudnnConvProblem problem(conv_shape(geometry, dy.rows()), precision_);
  if (symmetric_padding(geometry)) {
    cudnn_conv_backward_data(cudnn(), problem, weight.data(), dy.data(), dx.data());
    return;
  }
  const std::vector<int64_t> padded = cudnn_input_extents(geometry);
  Tensor padded_dx = empty(dy.rows(), geometry.in_channels * product(padded));
  cudnn_conv_backward_data(cudnn(), problem, weight.data(), dy.data(), padded_dx.data());
  cuda_launch::window_copy(padded_dx.data(), box(padded, 1), dx.data(), box(geometry.in, 1),
                           box(negated(geometry.pad_low), 0), dy.rows() * geometry.in_channels, stream_);
}

void CudaBackend::conv_accumulate_param_grads_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                                   Tensor& weight_grad, Tensor* bias_grad) {
  if (x.rows() == 0) return;
  CudnnConvProblem problem(conv_shape(geometry, x.rows()), precision_);
  if (symmetric_padding(geometry)) {
    cudnn_conv_backward_filter(cudnn(), problem, x.data(), dy.data(), weight_grad.data());
  } else {
    const Tensor padded = explicitly_padded(geometry, x);
    cudnn_conv_backward_filter(cudnn(), problem, padded.data(), dy.data(), weight_grad.data());
  }
  if (bias_grad != nullptr) {
    cudnn_accumulate_channel_bias_grad(cudnn(), problem.y, geometry.out_channels, geometry.dims(), dy.data(),
                                       bias_grad->data());
  }
}

void CudaBackend::deconv_forward_impl(const DeconvGeometry& geometry, const Tensor& x, const Tensor& weight,
                                      const Tensor* bias, Tensor& y) {
  if (x.rows() == 0) return;
  CudnnConvProblem problem(deconv_shape(geometry, x.rows()), precision_);
  cudnn_conv_backward_data(cudnn(), problem, weight.data(), x.data(), y.data());
  if (bias != nullptr) {
    cudnn_add_channel_bias(cudnn(), problem.x, geometry.out_channels, geometry.in.size(), bias->data(), y.data());
  }
}

void CudaBackend::deconv_backward_data_impl(const DeconvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                            Tensor& dx) {
  if (dy.rows() == 0) return;
  CudnnConvProblem problem(deconv_shape(geometry, dy.rows()), precision_);
  cudnn_conv_forward(cudnn(), problem, dy.data(), weight.data(), dx.data());
}

void CudaBackend::deconv_accumulate_param_grads_impl(const DeconvGeometry& geometry, const Tensor& x,
                                                     const Tensor& dy, Tensor& weight_grad, Tensor* bias_grad) {
  if (x.rows() == 0) return;
  CudnnConvProblem problem(deconv_shape(geometry, x.rows()), precision_);
  // The convolution's "input" is the deconv's output side (dy), its "output" the deconv's input (x).
  cudnn_conv_backward_filter(cudnn(), problem, dy.data(), x.data(), weight_grad.data());
  if (bias_grad != nullptr) {
    cudnn_accumulate_channel_bias_grad(cudnn(), problem.x, geometry.out_channels, geometry.in.size(), dy.data(),
                                       bias_grad->data());
  }
}

void CudaBackend::pool_forward_impl(const PoolGeometry& geometry, const Tensor& x, Tensor& y) {
  if (x.rows() == 0) return;
  const PoolingDescriptor pool(geometry.mode, geometry.kernel);
  const TensorDescriptor x_desc(x.rows(), geometry.channels, geometry.in);
  const TensorDescriptor y_desc(x.rows(), geometry.channels, geometry.out());
  check_cudnn(cudnnPoolingForward(cudnn().handle(), pool.get(), &kOne, x_desc.get(), x.data(), &kZero, y_desc.get(),
                                  y.data()),
              "cudnnPoolingForward");
}

void CudaBackend::pool_backward_impl(const PoolGeometry& geometry, const Tensor& x, const Tensor& dy, Tensor& dx) {
  if (x.rows() == 0) return;
  const PoolingDescriptor pool(geometry.mode, geometry.kernel);
  const TensorDescriptor x_desc(x.rows(), geometry.channels, geometry.in);
  const TensorDescriptor y_desc(x.rows(), geometry.channels, geometry.out());
  // cuDNN's backward reads the forward's output, which the Backend contract does not keep: recomputed.
  Tensor y = empty(x.rows(), geometry.out_features());
  check_cudnn(cudnnPoolingForward(cudnn().handle(), pool.get(), &kOne, x_desc.get(), x.data(), &kZero, y_desc.get(),
                                  y.data()),
              "cudnnPoolingForward (pool_backward)");
  check_cudnn(cudnnPoolingBackward(cudnn().handle(), pool.get(), &kOne, y_desc.get(), y.data(), y_desc.get(),
                                   dy.data(), x_desc.get(), x.data(), &kZero, x_desc.get(), dx.data()),
              "cudnnPoolingBackward");
}

void CudaBackend::copy_columns_impl(const Tensor& source, int64_t source_col, Tensor& destination,
                                    int64_t destination_col, int64_t count, bool add) {
  cuda_launch::copy_columns(source.data(), source.cols(), source_col, destination.data(), destination.cols(),
                            destination_col, source.rows(), count, add, stream_);
}

void CudaBackend::pad_forward_impl(const PadGeometry& geometry, const Tensor& x, Tensor& y) {
  cuda_launch::pad_forward(geometry.mode, x.data(), box(geometry.in, 1), box(geometry.low, 0), y.data(),
                           box(geometry.padded(), 1), x.rows() * geometry.channels, stream_);
}

void CudaBackend::pad_backward_impl(const PadGeometry& geometry, const Tensor& dy, Tensor& dx) {
  cuda_launch::pad_backward(geometry.mode, dy.data(), box(geometry.padded(), 1), box(geometry.low, 0), dx.data(),
                            box(geometry.in, 1), dy.rows() * geometry.channels, stream_);
}

void CudaBackend::resample_forward_impl(const ResampleGeometry& geometry, const Tensor& x, Tensor& y) {
  cuda_launch::resample_forward(geometry.mode, x.data(), box(geometry.in, 1), box(geometry.factor, 1), y.data(),
                                x.rows() * geometry.channels, stream_);
}

void CudaBackend::resample_backward_impl(const ResampleGeometry& geometry, const Tensor& dy, Tensor& dx) {
  cuda_launch::resample_backward(geometry.mode, dy.data(), box(geometry.in, 1), box(geometry.factor, 1), dx.data(),
                                 dy.rows() * geometry.channels, stream_);
}

}  // namespace sluice::kernels
