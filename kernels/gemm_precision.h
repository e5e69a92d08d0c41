// The precision a Backend's gemm multiplies in (config key `precision`, alias `gemm_precision`). fp32 is the
// default because it is the only mode that stays within 1e-5 of the fp32 reference; TF32 and bf16 trade that for
// speed and are opt-in: TF32 on CUDA only, bf16 on CUDA and on CPUs with avx512_bf16 (oneDNN). Plain C++, no CUDA
// header: every build parses the names.
#pragma once

#include <string>

#include "core/config/gemm_precision.h"

namespace sluice::kernels {

// The enum and its names are the config vocabulary (core/config/gemm_precision.h).
using GemmPrecision = config::GemmPrecision;

// "fp32" | "tf32" | "bf16"; anything else throws Error(kConfig) naming the bad value and the accepted ones.
GemmPrecision parse_gemm_precision(const std::string& name);
const char* gemm_precision_name(GemmPrecision precision);

// For backends that compute GEMMs in fp32 only: returns for kFp32, otherwise throws Error(kUnsupported)
// "precision: <name> is not available on device <device_name>; ...", so a config asking such a backend for
// reduced precision fails loudly instead of silently running in fp32.
void require_fp32_gemm(GemmPrecision precision, const std::string& device_name);

}  // namespace sluice::kernels
