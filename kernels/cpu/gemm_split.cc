#include "kernels/cpu/gemm_split.h"

namespace sluice::kernels {

GemmSplit gemm_split(int64_t m, int64_t n, int64_t k) {
  GemmSplit split;
  split.by_rows = m >= n;
  const int64_t side = split.by_rows ? m : n;
  split.block = side;
  if (m * n * k < kMinSplitMultiplyAdds) return split;
  const int64_t width = side >= 1024 ? 512 : side >= 512 ? 256 : 128;
  if (side < 2 * width) return split;  // one block
  split.block = width;
  split.count = (side + width - 1) / width;
  return split;
}

}  // namespace sluice::kernels
