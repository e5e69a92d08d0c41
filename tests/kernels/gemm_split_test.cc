// The rule that cuts a product into blocks for a rank's threads (kernels/cpu/gemm_split.h): the benchmark layer's
// products, the small ones that stay whole, and over a grid of shapes that the blocks cover c's split side exactly
// once with the stated widths.
#include "kernels/cpu/gemm_split.h"

#include "gtest/gtest.h"

namespace sluice::kernels {
namespace {

TEST(GemmSplitTest, TheLayerProductsOfThePipelineBenchmark) {
  const GemmSplit forward = gemm_split(32, 1024, 1024);  // x W^T and dy W: c is 32 x 1024
  EXPECT_FALSE(forward.by_rows);
  EXPECT_EQ(forward.block, 512);
  EXPECT_EQ(forward.count, 2);
  const GemmSplit weight_grad = gemm_split(1024, 1024, 32);  // dy^T x: c is the 1024 x 1024 gradient
  EXPECT_TRUE(weight_grad.by_rows);
  EXPECT_EQ(weight_grad.block, 512);
  EXPECT_EQ(weight_grad.count, 2);
  const GemmSplit narrower = gemm_split(32, 768, 1024);
  EXPECT_EQ(narrower.block, 256);
  EXPECT_EQ(narrower.count, 3);
}

TEST(GemmSplitTest, SmallProductsStayWhole) {
  EXPECT_EQ(gemm_split(32, 1024, 31).count, 1) << "under 2^20 multiply-adds";
  EXPECT_EQ(gemm_split(36, 33, 17).count, 1);
  EXPECT_EQ(gemm_split(4096, 300, 64).count, 8) << "the long side, in blocks of 512";
  EXPECT_EQ(gemm_split(32, 511, 4096).count, 4) << "a side of 256-511 in blocks of 128";
  EXPECT_EQ(gemm_split(500, 500, 4096).block, 128);
  const GemmSplit whole = gemm_split(32, 255, 4096);
  EXPECT_EQ(whole.count, 1) << "a side under 256 stays whole";
  EXPECT_EQ(whole.block, 255) << "one block is the whole side";
}

TEST(GemmSplitTest, BlocksCoverTheSplitSideExactlyOnce) {
  for (int64_t m : {1, 7, 32, 255, 256, 511, 512, 1023, 1024, 1025, 3000}) {
    for (int64_t n : {1, 5, 64, 256, 300, 512, 513, 1024, 2049}) {
      for (int64_t k : {1, 32, 1024}) {
        const GemmSplit split = gemm_split(m, n, k);
        const int64_t side = split.by_rows ? m : n;
        SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        EXPECT_EQ(split.by_rows, m >= n);
        ASSERT_GE(split.count, 1);
        ASSERT_GE(split.block, 1);
        EXPECT_GE(split.block * split.count, side) << "the blocks must reach the end";
        EXPECT_LT(split.block * (split.count - 1), side) << "no block may be empty";
        if (split.count > 1) {
          EXPECT_EQ(split.block, side >= 1024 ? 512 : side >= 512 ? 256 : 128);
          EXPECT_GE(m * n * k, kMinSplitMultiplyAdds);
        }
        const GemmSplit again = gemm_split(m, n, k);
        EXPECT_EQ(again.count, split.count);
        EXPECT_EQ(again.block, split.block);
      }
    }
  }
}

}  // namespace
}  // namespace sluice::kernels
