// A CudaBackend's cuDNN state: one handle bound to the backend's compute stream (so cuDNN work is ordered with
// every other op of the backend without host synchronisation), one workspace shared by all its cuDNN calls, and
// the algorithm chosen for each convolution shape. Made on the first field op, so a backend that never runs one
// never loads cuDNN.
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <map>
#include <string>

namespace sluice::kernels {

// One heuristic choice (kernels/cuda/cudnn_conv.h): the algorithm, its workspace and the math type it runs in.
struct CudnnAlgorithm {
  int algorithm = 0;
  size_t workspace_bytes = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;
};

class CudnnContext {
 public:
  // Algorithms needing more workspace than this are passed over for the next deterministic one: a convolution
  // must not take a GPU's memory from the activations for a faster algorithm.
  static constexpr size_t kWorkspaceLimitBytes = size_t{512} << 20;

  explicit CudnnContext(cudaStream_t stream);  // throws Error(kCuda) naming the failing call
  ~CudnnContext();
  CudnnContext(const CudnnContext&) = delete;
  CudnnContext& operator=(const CudnnContext&) = delete;

  cudnnHandle_t handle() const { return handle_; }
  // At least `bytes` of device memory for one cuDNN call (nullptr for 0). It only grows, to the largest request
  // so far (at most kWorkspaceLimitBytes), and is reused: every call is queued on the same stream, so one call's
  // use of it ends before the next begins. The old block is freed stream-ordered when it grows.
  void* workspace(size_t bytes);

  // The algorithm cached under `key` (the op and every size of its problem), or nullptr.
  const CudnnAlgorithm* cached(const std::string& key) const;
  void remember(const std::string& key, const CudnnAlgorithm& algorithm) { algorithms_[key] = algorithm; }

 private:
  cudaStream_t stream_;
  cudnnHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::map<std::string, CudnnAlgorithm> algorithms_;
};

}  // namespace sluice::kernels
