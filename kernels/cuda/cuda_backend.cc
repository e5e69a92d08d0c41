// Context, memory and host transfers of CudaBackend, and the process-wide instance.
#include "kernels/cuda/cuda_backend.h"

#include <cstdint>
#include <memory>
#include <string>

#include "core/common/error.h"
#include "kernels/cuda/cuda_buffer.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cudnn_context.h"
#include "kernels/cuda/cufft_plans.h"
#include "kernels/device_request.h"

namespace sluice::kernels {

CudaBackend::CudaBackend(int device_ordinal) : device_ordinal_(device_ordinal) {
  check_cuda(cudaSetDevice(device_ordinal_), "cudaSetDevice");
  // Keep freed blocks in the pool: a training step frees and re-allocates the same sizes every step, and
  // returning them to the driver at each synchronisation would make every step pay for fresh allocations.
  cudaMemPool_t pool = nullptr;
  check_cuda(cudaDeviceGetDefaultMemPool(&pool, device_ordinal_), "cudaDeviceGetDefaultMemPool");
  uint64_t keep_everything = UINT64_MAX;
  check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything),
             "cudaMemPoolSetAttribute (release threshold)");
  // Non-blocking: the legacy default stream, which other libraries may use, must not serialise with ours.
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check_cublas(cublasCreate(&cublas_), "cublasCreate");
  check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
  // Default math: tensor-core TF32 only when a call asks for it through its compute type (gemm precision).
  check_cublas(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
}

CudaBackend::~CudaBackend() {
  // Errors are ignored: a destructor cannot throw, and the device may already be gone at this point.
  // Drain first: cuBLAS and the streams must not be destroyed under work still queued on them.
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (communication_stream_ != nullptr) {
    cudaStreamSynchronize(communication_stream_);
    cudaStreamDestroy(communication_stream_);
  }
  cudnn_.reset();  // its workspace is freed on stream_, so before the stream goes
  cufft_.reset();  // plans bound to stream_
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

cudaStream_t CudaBackend::communication_stream() {
  if (communication_stream_ == nullptr) {
    check_cuda(cudaSetDevice(device_ordinal_), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&communication_stream_, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags (communication stream)");
  }
  return communication_stream_;
}

HostStaging& CudaBackend::host_staging() {
  if (!staging_) staging_ = std::make_unique<CudaHostStaging>(stream_);
  return *staging_;
}

void CudaBackend::synchronize() { check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

Tensor CudaBackend::zeros(int64_t rows, int64_t cols) { return allocate(rows, cols, true); }

Tensor CudaBackend::empty(int64_t rows, int64_t cols) { return allocate(rows, cols, false); }

Tensor CudaBackend::allocate(int64_t rows, int64_t cols, bool zero_filled) {
  if (rows < 0 || cols < 0) {
    // Tensor's constructor words this error; build an empty one through it to get the same message.
    return Tensor(rows, cols, nullptr);
  }
  return Tensor(rows, cols, std::make_unique<CudaBuffer>(static_cast<size_t>(rows * cols), stream_, zero_filled));
}

Tensor CudaBackend::from_host(int64_t rows, int64_t cols, const float* values) {
  Tensor tensor = empty(rows, cols);  // the copy writes every element
  if (!tensor.empty()) {
    // From pageable memory the copy is staged before the call returns, so `values` may be reused at once.
    check_cuda(cudaMemcpyAsync(tensor.data(), values, tensor.bytes(), cudaMemcpyHostToDevice, stream_),
               "cudaMemcpyAsync (from_host)");
  }
  return tensor;
}

void CudaBackend::require_on_device(const char* op, const char* operand, const Tensor& tensor) const {
  if (!tensor.empty() && tensor.device() != Device::kCuda) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(op) + ": " + operand + " is a host tensor; the CUDA backend needs device tensors");
  }
}

void CudaBackend::to_host(const Tensor& tensor, float* values) {
  require_on_device("to_host", "tensor", tensor);
  if (tensor.empty()) return;
  check_cuda(cudaMemcpyAsync(values, tensor.data(), tensor.bytes(), cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync (to_host)");
  synchronize();
}

CudaBackend& cuda_backend(int local_rank) {
  static CudaBackend* backend = [local_rank] {
    return new CudaBackend(device_for_local_rank(local_rank, cuda_device_count()));
  }();
  return *backend;
}

}  // namespace sluice::kernels
