// A C API caller's own CUDA device arrays (sluice.h, "Device arrays"): whether an address is device memory, and
// copies between it and host memory on the caller's stream. The header names no CUDA type, so the C API's staging
// (capi/device_arrays_cuda.cc) includes no CUDA header (the layering rule: CUDA stays in kernels/cuda).
#pragma once

#include <cstdint>
#include <string>

namespace sluice::kernels {

// Error(kInvalidArgument) naming `argument` when `address` is not CUDA device or managed memory (host, pinned or
// unknown to CUDA); Error(kCuda) when CUDA cannot answer (no device, no driver).
void require_device_address(const void* address, const std::string& argument);

// `count` floats queued on `stream` (a cudaStream_t; nullptr: the default stream); `what` names the copy in errors.
void copy_device_to_host(float* host, const float* device, int64_t count, void* stream, const std::string& what);
void copy_host_to_device(float* device, const float* host, int64_t count, void* stream, const std::string& what);

// Waits until everything queued on `stream` (the caller's work and these copies) is done.
void synchronize_caller_stream(void* stream);

}  // namespace sluice::kernels
