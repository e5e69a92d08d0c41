// Config key `precision` (its alias `gemm_precision` is the name it had before issue 30): the precision a Backend's
// gemm multiplies in (kernels/gemm_precision.h has what each backend does with it). Vocabulary: every layer may
// include it.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::config {

enum class GemmPrecision {
  kFp32,  // fp32 inputs, fp32 math, tensor-core TF32 explicitly off
  kTf32,  // fp32 inputs rounded to TF32 inside cuBLAS, fp32 accumulation (cuda stages only)
  kBf16,  // inputs converted to bf16 per call, fp32 accumulation and fp32 output (weights stay fp32 masters);
          // cuBLAS on a cuda stage, oneDNN on a cpu stage with avx512_bf16
};

// fp32, tf32, bf16.
inline const ChoiceTable<GemmPrecision>& gemm_precisions() {
  static const ChoiceTable<GemmPrecision> table = {
      {GemmPrecision::kFp32, "fp32"}, {GemmPrecision::kTf32, "tf32"}, {GemmPrecision::kBf16, "bf16"}};
  return table;
}

}  // namespace sluice::config
