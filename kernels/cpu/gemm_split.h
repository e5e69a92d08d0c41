// How the CPU backend cuts one product c (m x n) = op(a) op(b) into blocks that a rank's threads compute side by
// side (issue 17 item 4: a rank uses the cores it owns).
//
// Why blocks of a fixed shape: the bits of a product must not depend on the thread count (a pipeline and its
// sequential reference run on different core counts, so does a resume on other nodes). Each block is one call to
// a BLAS library on ONE thread, and the blocks depend on (m, n, k) alone, so one thread running the blocks in turn
// and several running them at once compute every element the same way. Splitting c's rows or columns never splits
// the sum over k, which is what a library's own threads may do.
//
// The block width is a trade measured in bench/kernels:routed_gemm_bench (one 1024-wide layer's three products at
// 32-row micro-batches; bench/README.md): two blocks of 512 cost one thread 3-11% over the whole products (each
// block re-reads the un-split operand and pays a call), four of 256 a little more, and two threads ran the layer in
// 0.50-0.56x the time of one on the whole products. So blocks are as wide as still leaves two or more of them on a
// layer's products; a rank with more threads than a product has blocks leaves the rest idle for that product.
#pragma once

#include <cstdint>

namespace sluice::kernels {

struct GemmSplit {
  bool by_rows = false;  // blocks of c's rows (the transposed-a gradient dy^T x) or of its columns
  int64_t block = 1;     // rows or columns per block; the last block may be narrower
  int64_t count = 1;     // number of blocks; 1 = the whole product in one call
};

// Products below this many multiply-adds stay whole: a block's call overhead would not be repaid.
constexpr int64_t kMinSplitMultiplyAdds = int64_t{1} << 20;

// Splits the longer side of c (rows when m >= n) in blocks of 512 when that side is 1024 or longer, of 256 from 512,
// of 128 from 256; shorter sides stay whole. Pure: depends on the shape alone.
GemmSplit gemm_split(int64_t m, int64_t n, int64_t k);

}  // namespace sluice::kernels
