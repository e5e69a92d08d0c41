// How CudaBackend::gemm multiplies. fp32 is the default because it is the only mode that stays within 1e-5 of
// the CPU path; TF32 and bf16 trade that for tensor-core speed and are opt-in.
#pragma once

#include <string>

namespace sluice::kernels {

enum class GemmPrecision {
  kFp32,  // fp32 inputs, fp32 math, tensor-core TF32 explicitly off
  kTf32,  // fp32 inputs rounded to TF32 inside cuBLAS, fp32 accumulation
  kBf16,  // inputs converted to bf16 per call, fp32 accumulation and fp32 output (weights stay fp32 masters)
};

// "fp32" | "tf32" | "bf16"; anything else throws Error(kConfig) naming the bad value and the accepted ones.
GemmPrecision parse_gemm_precision(const std::string& name);
const char* gemm_precision_name(GemmPrecision precision);

}  // namespace sluice::kernels
