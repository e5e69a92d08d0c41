// The pieces rank 0 writes a dataset in: each within the budget, together every element exactly once and in order,
// and each piece's hyperslab selects exactly its elements (checked by walking the row-major indices independently).
#include "checkpoint/dataset_chunks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace sluice::checkpoint {
namespace {

// The row-major (flat) index of every element the hyperslab selects, in row-major order.
std::vector<int64_t> selected_elements(const std::vector<int64_t>& dims, const Hyperslab& slab) {
  std::vector<int64_t> out;
  std::vector<uint64_t> at = slab.start;
  for (;;) {
    int64_t flat = 0;
    for (size_t k = 0; k < dims.size(); ++k) flat = flat * dims[k] + static_cast<int64_t>(at[k]);
    out.push_back(flat);
    size_t k = dims.size();
    while (k > 0) {
      --k;
      if (++at[k] < slab.start[k] + slab.count[k]) break;
      at[k] = slab.start[k];
      if (k == 0) return out;
    }
  }
}

void expect_valid_plan(const std::vector<int64_t>& dims, size_t element_size, size_t budget) {
  const ChunkPlan plan(dims, element_size, budget);
  int64_t total = 1;
  for (int64_t dim : dims) total *= dim;
  int64_t next = 0;
  for (const DatasetChunk& chunk : plan.chunks()) {
    EXPECT_EQ(chunk.first_element, next);
    EXPECT_GT(chunk.elements, 0);
    EXPECT_LE(static_cast<size_t>(chunk.elements) * element_size, budget);
    std::vector<int64_t> expected(static_cast<size_t>(chunk.elements));
    for (int64_t i = 0; i < chunk.elements; ++i) expected[static_cast<size_t>(i)] = chunk.first_element + i;
    EXPECT_EQ(selected_elements(dims, plan.hyperslab(chunk)), expected) << "chunk at " << chunk.first_element;
    next += chunk.elements;
  }
  EXPECT_EQ(next, total);
}

TEST(ChunkPlan, CoversEveryShapeWithinTheBudget) {
  const std::vector<std::vector<int64_t>> shapes = {{1}, {7}, {3, 4}, {5, 1}, {1, 9}, {2, 3, 5}, {4, 1, 3, 2}};
  for (const auto& dims : shapes) {
    for (size_t budget : {4, 8, 12, 20, 24, 28, 64, 1000}) {
      SCOPED_TRACE(::testing::Message() << "dims of rank " << dims.size() << ", budget " << budget);
      expect_valid_plan(dims, 4, budget);
    }
  }
}

TEST(ChunkPlan, WholeDatasetWhenItFits) {
  const ChunkPlan plan({3, 4}, 4, 48);
  ASSERT_EQ(plan.chunks().size(), 1u);
  EXPECT_EQ(plan.chunks()[0].elements, 12);
  EXPECT_EQ(plan.hyperslab(plan.chunks()[0]).count, (std::vector<uint64_t>{3, 4}));
}

TEST(ChunkPlan, RowsWhenARowFitsAndPiecesOfARowWhenNot) {
  const ChunkPlan rows({3, 4}, 4, 32);  // two rows fit
  ASSERT_EQ(rows.chunks().size(), 2u);
  EXPECT_EQ(rows.chunks()[1].first_element, 8);
  EXPECT_EQ(rows.hyperslab(rows.chunks()[1]).start, (std::vector<uint64_t>{2, 0}));
  const ChunkPlan pieces({3, 4}, 8, 24);  // three of a row's four elements fit: 3 + 1 per row
  ASSERT_EQ(pieces.chunks().size(), 6u);
  EXPECT_EQ(pieces.chunks()[1].elements, 1);
  EXPECT_EQ(pieces.hyperslab(pieces.chunks()[3]).start, (std::vector<uint64_t>{1, 3}));
}

TEST(ChunkPlan, ScalarIsOneChunkAndEmptyDatasetNone) {
  const ChunkPlan scalar({}, 8, 8);
  ASSERT_EQ(scalar.chunks().size(), 1u);
  EXPECT_TRUE(scalar.hyperslab(scalar.chunks()[0]).start.empty());
  EXPECT_TRUE(ChunkPlan({3, 0, 2}, 4, 64).chunks().empty());
}

// A block's sub-box copied into a slab: every element of the region lands where the slab's row-major layout puts
// it, and nothing else in the slab is touched. Values are their global flat index in a [3, 5, 7] array.
TEST(BoxCopyTest, RegionMovesBetweenTwoBoxLayouts) {
  const std::vector<int64_t> dims{3, 5, 7};
  const auto flat = [&](int64_t a, int64_t b, int64_t c) { return static_cast<float>((a * dims[1] + b) * dims[2] + c); };
  const Box block{{1, 1, 2}, {2, 3, 5}};
  std::vector<float> from;
  for (int64_t a = 1; a < 3; ++a)
    for (int64_t b = 1; b < 4; ++b)
      for (int64_t c = 2; c < 7; ++c) from.push_back(flat(a, b, c));
  const Box slab{{1, 0, 0}, {1, 5, 7}};
  Box region;
  ASSERT_TRUE(intersect_boxes(slab, block, region));
  EXPECT_EQ(region.offset, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(region.extent, (std::vector<int64_t>{1, 3, 5}));
  EXPECT_TRUE(box_contains(block, region));
  std::vector<float> to(35, -1.0f);
  copy_box(from.data(), block, to.data(), slab, region, sizeof(float));
  int copied = 0;
  for (int64_t b = 0; b < 5; ++b) {
    for (int64_t c = 0; c < 7; ++c) {
      const bool inside = b >= 1 && b < 4 && c >= 2;
      const float got = to[static_cast<size_t>(b * 7 + c)];
      EXPECT_EQ(got, inside ? flat(1, b, c) : -1.0f) << b << "," << c;
      copied += inside ? 1 : 0;
    }
  }
  EXPECT_EQ(copied, box_volume(region));
  EXPECT_FALSE(intersect_boxes(Box{{0, 0, 0}, {1, 5, 7}}, block, region));
}

}  // namespace
}  // namespace sluice::checkpoint
