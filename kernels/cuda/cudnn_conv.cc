#include "kernels/cuda/cudnn_conv.h"

#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cuda/cudnn_check.h"

namespace sluice::kernels {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

bool uses_tensor_ops(GemmPrecision precision) { return precision != GemmPrecision::kFp32; }

std::string join(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i == 0 ? "" : "x") + std::to_string(values[i]);
  return text;
}

std::string describe(const CudnnConvShape& s, bool tensor_ops) {
  return std::to_string(s.samples) + " samples, " + std::to_string(s.x_channels) + "x" + join(s.x_extents) + " -> " +
         std::to_string(s.y_channels) + "x" + join(s.y_extents) + ", kernel " + join(s.kernel) + ", pad " +
         join(s.pad) + ", stride " + join(s.stride) + ", dilation " + join(s.dilation) + ", groups " +
         std::to_string(s.groups) + (tensor_ops ? ", tf32" : ", fp32");
}

bool is_tensor_op_math(cudnnMathType_t math) {
  return math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// The first of the heuristics' results (best first) that succeeded, is deterministic, fits the workspace limit
// and, in fp32, does not use tensor cores.
template <typename Perf>
CudnnAlgorithm first_deterministic(const std::vector<Perf>& results, int returned, bool tensor_ops, const char* op,
                                   const std::string& problem) {
  for (int i = 0; i < returned; ++i) {
    const Perf& result = results[static_cast<size_t>(i)];
    if (result.status != CUDNN_STATUS_SUCCESS || result.determinism != CUDNN_DETERMINISTIC) continue;
    if (result.memory > CudnnContext::kWorkspaceLimitBytes) continue;
    if (!tensor_ops && is_tensor_op_math(result.mathType)) continue;
    return {static_cast<int>(result.algo), result.memory, tensor_ops ? result.mathType : CUDNN_FMA_MATH};
  }
  throw Error(ErrorCode::kUnsupported, std::string(op) + ": cuDNN's heuristics offer no deterministic algorithm " +
                                           "within the workspace limit for " + problem);
}

CudnnAlgorithm forward_algorithm(CudnnContext& context, CudnnConvProblem& p) {
  const std::string key = "forward " + p.key;
  if (const CudnnAlgorithm* cached = context.cached(key)) return *cached;
  int count = 0;
  check_cudnn(cudnnGetConvolutionForwardAlgorithmMaxCount(context.handle(), &count),
              "cudnnGetConvolutionForwardAlgorithmMaxCount");
  std::vector<cudnnConvolutionFwdAlgoPerf_t> results(static_cast<size_t>(count));
  int returned = 0;
  check_cudnn(cudnnGetConvolutionForwardAlgorithm_v7(context.handle(), p.x.get(), p.w.get(), p.conv.get(), p.y.get(),
                                                     count, &returned, results.data()),
              "cudnnGetConvolutionForwardAlgorithm_v7");
  CudnnAlgorithm chosen = first_deterministic(results, returned, p.tensor_ops, "conv forward", p.key);
  p.conv.set_math(chosen.math);
  check_cudnn(cudnnGetConvolutionForwardWorkspaceSize(context.handle(), p.x.get(), p.w.get(), p.conv.get(),
                                                      p.y.get(), static_cast<cudnnConvolutionFwdAlgo_t>(chosen.algorithm),
                                                      &chosen.workspace_bytes),
              "cudnnGetConvolutionForwardWorkspaceSize");
  context.remember(key, chosen);
  return chosen;
}

CudnnAlgorithm backward_data_algorithm(CudnnContext& context, CudnnConvProblem& p) {
  const std::string key = "backward data " + p.key;
  if (const CudnnAlgorithm* cached = context.cached(key)) return *cached;
  int count = 0;
  check_cudnn(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(context.handle(), &count),
              "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> results(static_cast<size_t>(count));
  int returned = 0;
  check_cudnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(context.handle(), p.w.get(), p.y.get(), p.conv.get(),
                                                          p.x.get(), count, &returned, results.data()),
              "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  CudnnAlgorithm chosen = first_deterministic(results, returned, p.tensor_ops, "conv backward data", p.key);
  p.conv.set_math(chosen.math);
  check_cudnn(cudnnGetConvolutionBackwardDataWorkspaceSize(
                  context.handle(), p.w.get(), p.y.get(), p.conv.get(), p.x.get(),
                  static_cast<cudnnConvolutionBwdDataAlgo_t>(chosen.algorithm), &chosen.workspace_bytes),
              "cudnnGetConvolutionBackwardDataWorkspaceSize");
  context.remember(key, chosen);
  return chosen;
}

CudnnAlgorithm backward_filter_algorithm(CudnnContext& context, CudnnConvProblem& p) {
  const std::string key = "backward filter " + p.key;
  if (const CudnnAlgorithm* cached = context.cached(key)) return *cached;
  int count = 0;
  check_cudnn(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(context.handle(), &count),
              "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> results(static_cast<size_t>(count));
  int returned = 0;
  check_cudnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(context.handle(), p.x.get(), p.y.get(), p.conv.get(),
                                                            p.w.get(), count, &returned, results.data()),
              "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  CudnnAlgorithm chosen = first_deterministic(results, returned, p.tensor_ops, "conv backward filter", p.key);
  p.conv.set_math(chosen.math);
  check_cudnn(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                  context.handle(), p.x.get(), p.y.get(), p.conv.get(), p.w.get(),
                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(chosen.algorithm), &chosen.workspace_bytes),
              "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  context.remember(key, chosen);
  return chosen;
}

}  // namespace

CudnnConvProblem::CudnnConvProblem(const CudnnConvShape& shape, GemmPrecision precision)
    : x(shape.samples, shape.x_channels, shape.x_extents),
      y(shape.samples, shape.y_channels, shape.y_extents),
      w(shape.y_channels, shape.x_channels / shape.groups, shape.kernel),
      conv(shape.pad, shape.stride, shape.dilation, shape.groups,
           uses_tensor_ops(precision) ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
      key(describe(shape, uses_tensor_ops(precision))),
      tensor_ops(uses_tensor_ops(precision)) {}

void cudnn_conv_forward(CudnnContext& context, CudnnConvProblem& problem, const float* x, const float* w, float* y) {
  const CudnnAlgorithm algorithm = forward_algorithm(context, problem);
  problem.conv.set_math(algorithm.math);
  void* workspace = context.workspace(algorithm.workspace_bytes);
  check_cudnn(cudnnConvolutionForward(context.handle(), &kOne, problem.x.get(), x, problem.w.get(), w,
                                      problem.conv.get(), static_cast<cudnnConvolutionFwdAlgo_t>(algorithm.algorithm),
                                      workspace, algorithm.workspace_bytes, &kZero, problem.y.get(), y),
              "cudnnConvolutionForward");
}

void cudnn_conv_backward_data(CudnnContext& context, CudnnConvProblem& problem, const float* w, const float* dy,
                              float* dx) {
  const CudnnAlgorithm algorithm = backward_data_algorithm(context, problem);
  problem.conv.set_math(algorithm.math);
  void* workspace = context.workspace(algorithm.workspace_bytes);
  check_cudnn(cudnnConvolutionBackwardData(context.handle(), &kOne, problem.w.get(), w, problem.y.get(), dy,
                                           problem.conv.get(),
                                           static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm.algorithm), workspace,
                                           algorithm.workspace_bytes, &kZero, problem.x.get(), dx),
              "cudnnConvolutionBackwardData");
}

void cudnn_conv_backward_filter(CudnnContext& context, CudnnConvProblem& problem, const float* x, const float* dy,
                                float* dw) {
  const CudnnAlgorithm algorithm = backward_filter_algorithm(context, problem);
  problem.conv.set_math(algorithm.math);
  void* workspace = context.workspace(algorithm.workspace_bytes);
  check_cudnn(cudnnConvolutionBackwardFilter(context.handle(), &kOne, problem.x.get(), x, problem.y.get(), dy,
                                             problem.conv.get(),
                                             static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm.algorithm),
                                             workspace, algorithm.workspace_bytes, &kOne, problem.w.get(), dw),
              "cudnnConvolutionBackwardFilter");
}

void cudnn_add_channel_bias(CudnnContext& context, const TensorDescriptor& y_desc, int64_t channels,
                            size_t spatial_dims, const float* bias, float* y) {
  const TensorDescriptor bias_desc = TensorDescriptor::channel_vector(channels, spatial_dims);
  check_cudnn(cudnnAddTensor(context.handle(), &kOne, bias_desc.get(), bias, &kOne, y_desc.get(), y),
              "cudnnAddTensor (conv bias)");
}

void cudnn_accumulate_channel_bias_grad(CudnnContext& context, const TensorDescriptor& dy_desc, int64_t channels,
                                        size_t spatial_dims, const float* dy, float* bias_grad) {
  const TensorDescriptor bias_desc = TensorDescriptor::channel_vector(channels, spatial_dims);
  check_cudnn(cudnnConvolutionBackwardBias(context.handle(), &kOne, dy_desc.get(), dy, &kOne, bias_desc.get(),
                                           bias_grad),
              "cudnnConvolutionBackwardBias");
}

}  // namespace sluice::kernels
