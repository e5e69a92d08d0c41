#include "kernels/cuda/gemm_precision.h"

#include "core/common/error.h"

namespace sluice::kernels {

GemmPrecision parse_gemm_precision(const std::string& name) {
  if (name == "fp32") return GemmPrecision::kFp32;
  if (name == "tf32") return GemmPrecision::kTf32;
  if (name == "bf16") return GemmPrecision::kBf16;
  throw Error(ErrorCode::kConfig, "unknown GEMM precision '" + name + "' (expected fp32, tf32 or bf16)");
}

const char* gemm_precision_name(GemmPrecision precision) {
  switch (precision) {
    case GemmPrecision::kFp32: return "fp32";
    case GemmPrecision::kTf32: return "tf32";
    case GemmPrecision::kBf16: return "bf16";
  }
  return "unknown";
}

}  // namespace sluice::kernels
