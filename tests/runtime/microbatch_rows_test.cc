// The one rule that cuts a training call's batch into micro-batches (core/runtime/microbatch_rows.h).
#include "core/runtime/microbatch_rows.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

std::vector<int64_t> counts(int64_t rows, int microbatches) {
  std::vector<int64_t> out;
  int64_t next = 0;
  for (int i = 0; i < microbatches; ++i) {
    const MicrobatchRows part = microbatch_rows(rows, microbatches, i);
    EXPECT_EQ(part.first, next) << "micro-batch " << i << " of a batch of " << rows;  // contiguous, in order
    next = part.first + part.count;
    out.push_back(part.count);
  }
  EXPECT_EQ(next, rows);
  return out;
}

TEST(MicrobatchRows, TheFirstBModMMicrobatchesGetOneRowMore) {
  EXPECT_EQ(counts(7, 4), (std::vector<int64_t>{2, 2, 2, 1}));
  EXPECT_EQ(counts(10, 4), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(counts(13, 4), (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_EQ(counts(4, 4), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(MicrobatchRows, EvenBatchesKeepTheirEqualCut) {
  EXPECT_EQ(counts(32, 4), (std::vector<int64_t>{8, 8, 8, 8}));
  EXPECT_EQ(microbatch_rows(32, 4, 3).first, 24);
}

TEST(MicrobatchRows, ABatchBelowTheMicrobatchCountIsAnInternalError) {
  EXPECT_THROW(microbatch_rows(3, 4, 0), Error);  // the trainer refuses b < M before any step runs
  EXPECT_THROW(microbatch_rows(8, 4, 4), Error);
}

}  // namespace
}  // namespace sluice::runtime
