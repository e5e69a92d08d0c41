#include "kernels/cuda/caller_arrays.h"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "core/common/error.h"

namespace sluice::kernels {

namespace {

void checked(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw Error(ErrorCode::kCuda, what + " failed: " + cudaGetErrorString(status));
}

}  // namespace

void require_device_address(const void* address, const std::string& argument) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, address);
  // cudaErrorInvalidValue: an address CUDA does not know (older runtimes' answer for plain host memory). Not a
  // sticky error: cleared so that the next CUDA call does not report it.
  if (status == cudaErrorInvalidValue) cudaGetLastError();
  if (status != cudaSuccess && status != cudaErrorInvalidValue) {
    checked(status, "cudaPointerGetAttributes of " + argument);
  }
  const bool device = status == cudaSuccess &&
                      (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged);
  if (device) return;
  char text[32];
  std::snprintf(text, sizeof(text), "%p", address);
  throw Error(ErrorCode::kInvalidArgument, argument + " (" + text +
                                               ") is host memory, not a CUDA device address: pass device arrays "
                                               "here, or host arrays to the call without _device");
}

void copy_device_to_host(float* host, const float* device, int64_t count, void* stream, const std::string& what) {
  checked(cudaMemcpyAsync(host, device, static_cast<size_t>(count) * sizeof(float), cudaMemcpyDeviceToHost,
                          static_cast<cudaStream_t>(stream)),
          what);
}

void copy_host_to_device(float* device, const float* host, int64_t count, void* stream, const std::string& what) {
  checked(cudaMemcpyAsync(device, host, static_cast<size_t>(count) * sizeof(float), cudaMemcpyHostToDevice,
                          static_cast<cudaStream_t>(stream)),
          what);
}

void synchronize_caller_stream(void* stream) {
  checked(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize of the caller's stream");
}

}  // namespace sluice::kernels
