#include "kernels/gemm_precision.h"

#include <cctype>
#include <optional>

#include "core/common/error.h"

namespace sluice::kernels {

GemmPrecision parse_gemm_precision(const std::string& name) {
  if (const std::optional<GemmPrecision> precision = config::gemm_precisions().find(name)) return *precision;
  throw Error(ErrorCode::kConfig, "unknown GEMM precision '" + name + "' (expected fp32, tf32 or bf16)");
}

const char* gemm_precision_name(GemmPrecision precision) { return config::gemm_precisions().name_of(precision); }

void require_fp32_gemm(GemmPrecision precision, const std::string& device_name) {
  if (precision == GemmPrecision::kFp32) return;
  // "cpu" names the device as the config spells it; "CPU" is how prose names the backend.
  std::string backend_label = device_name;
  for (char& c : backend_label) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  throw Error(ErrorCode::kUnsupported, std::string("precision: ") + gemm_precision_name(precision) +
                                           " is not available on device " + device_name + "; the " + backend_label +
                                           " backend computes GEMMs in fp32");
}

}  // namespace sluice::kernels
