// Sluice's generated schedules against outside references: for every case, Sluice's makespan is no longer than the
// reference's, and where it is equal, no rank holds more micro-batches in flight than the reference's same rank
// (ZB-V: no rank holds more than the reference's busiest rank, at any length).
//
// Where the numbers come from: PyTorch 2.15.0 (the PyPI wheel torch-2.15.0-cp311 manylinux_2_28_x86_64),
// torch/distributed/pipelining/schedules.py, classes ScheduleInterleaved1F1B (stage c·p + r on rank r) and
// ScheduleZBVZeroBubble (stages r and 2p-1-r on rank r). Each class computes `pipeline_order` in its constructor;
// it was built with stand-in stage objects (num_stages, group_size, group_rank, stage_index; the rest of torch
// stubbed, since the CUDA wheel does not load on a machine without CUDA libraries), the None slots dropped, and
// the per-rank orders scored with an event simulator written for this purpose, not Sluice's: F of stage s after F
// of s-1; B or I of s after B or I of s+1 (the last stage's after its own F); W after I; one action at a time per
// rank in list order; F = I = W = 1, B = 2, no communication cost. Peak = the most (stage, micro-batch) pairs on a
// rank between its F and its last backward piece (B, or W). PyTorch refuses some (p, m) that Sluice runs
// (interleaved when m is not a multiple of max(1, m/p)), so those have no row. Obtained 2026-11-23.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/schedule/generators.h"
#include "core/schedule/simulator.h"

namespace sluice {
namespace schedule {
namespace {

struct Reference {
  const char* schedule;
  int ranks, microbatches, chunks;
  double makespan;
  std::vector<int> peaks;
};

const std::vector<Reference>& pytorch_references() {
  static const std::vector<Reference> references = {
    {"interleaved", 2, 1, 2, 12, {2, 2}},
    {"interleaved", 2, 2, 2, 15, {4, 3}},
    {"interleaved", 2, 4, 2, 27, {5, 3}},
    {"interleaved", 2, 10, 2, 63, {5, 3}},
    {"interleaved", 4, 1, 2, 24, {2, 2, 2, 2}},
    {"interleaved", 4, 2, 2, 27, {4, 4, 4, 3}},
    {"interleaved", 4, 3, 2, 30, {6, 6, 6, 4}},
    {"interleaved", 4, 4, 2, 33, {8, 8, 7, 5}},
    {"interleaved", 4, 6, 2, 45, {12, 11, 9, 7}},
    {"interleaved", 4, 8, 2, 57, {11, 9, 7, 5}},
    {"interleaved", 4, 10, 2, 69, {12, 10, 8, 6}},
    {"interleaved", 8, 1, 2, 48, {2, 2, 2, 2, 2, 2, 2, 2}},
    {"interleaved", 8, 2, 2, 51, {4, 4, 4, 4, 4, 4, 4, 3}},
    {"interleaved", 8, 7, 2, 66, {14, 14, 14, 14, 14, 12, 10, 8}},
    {"interleaved", 8, 8, 2, 69, {16, 16, 16, 16, 15, 13, 11, 9}},
    {"interleaved", 8, 10, 2, 81, {20, 20, 20, 19, 17, 15, 13, 11}},
    {"interleaved", 8, 14, 2, 105, {28, 27, 25, 23, 21, 19, 17, 15}},
    {"interleaved", 8, 16, 2, 117, {23, 21, 19, 17, 15, 13, 11, 9}},
    {"interleaved", 8, 22, 2, 153, {26, 24, 22, 20, 18, 16, 14, 12}},
    {"interleaved", 16, 1, 2, 96, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
    {"interleaved", 16, 2, 2, 99, {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3}},
    {"interleaved", 16, 15, 2, 138, {30, 30, 30, 30, 30, 30, 30, 30, 30, 28, 26, 24, 22, 20, 18, 16}},
    {"interleaved", 16, 16, 2, 141, {32, 32, 32, 32, 32, 32, 32, 32, 31, 29, 27, 25, 23, 21, 19, 17}},
    {"interleaved", 16, 18, 2, 153, {36, 36, 36, 36, 36, 36, 36, 35, 33, 31, 29, 27, 25, 23, 21, 19}},
    {"interleaved", 16, 30, 2, 225, {60, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31}},
    {"interleaved", 16, 32, 2, 237, {47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27, 25, 23, 21, 19, 17}},
    {"interleaved", 16, 46, 2, 321, {54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26, 24}},
    {"interleaved", 4, 3, 3, 42, {9, 9, 9, 7}},
    {"interleaved", 4, 4, 3, 45, {12, 12, 11, 9}},
    {"interleaved", 4, 6, 3, 63, {18, 17, 15, 13}},
    {"interleaved", 4, 8, 3, 81, {15, 13, 11, 9}},
    {"interleaved", 8, 5, 3, 84, {15, 15, 15, 15, 15, 15, 13, 11}},
    {"interleaved", 8, 10, 3, 111, {30, 30, 30, 29, 27, 25, 23, 21}},
    {"interleaved", 8, 24, 3, 237, {31, 29, 27, 25, 23, 21, 19, 17}},
    {"zb-v", 2, 1, 2, 10, {2, 2}},
    {"zb-v", 2, 2, 2, 14, {3, 4}},
    {"zb-v", 2, 3, 2, 19, {4, 4}},
    {"zb-v", 2, 4, 2, 25, {4, 4}},
    {"zb-v", 2, 7, 2, 43, {4, 4}},
    {"zb-v", 4, 1, 2, 18, {2, 2, 2, 2}},
    {"zb-v", 4, 2, 2, 22, {3, 4, 4, 4}},
    {"zb-v", 4, 3, 2, 26, {4, 5, 6, 6}},
    {"zb-v", 4, 4, 2, 30, {5, 6, 7, 8}},
    {"zb-v", 4, 6, 2, 39, {7, 8, 8, 8}},
    {"zb-v", 4, 7, 2, 45, {8, 8, 8, 8}},
    {"zb-v", 4, 8, 2, 51, {8, 8, 8, 8}},
    {"zb-v", 4, 13, 2, 81, {8, 8, 8, 8}},
    {"zb-v", 8, 1, 2, 34, {2, 2, 2, 2, 2, 2, 2, 2}},
    {"zb-v", 8, 2, 2, 38, {3, 4, 4, 4, 4, 4, 4, 4}},
    {"zb-v", 8, 7, 2, 58, {8, 9, 10, 11, 12, 13, 14, 14}},
    {"zb-v", 8, 8, 2, 62, {9, 10, 11, 12, 13, 14, 15, 16}},
    {"zb-v", 8, 10, 2, 70, {11, 12, 13, 14, 15, 16, 16, 16}},
    {"zb-v", 8, 14, 2, 91, {15, 16, 16, 16, 16, 16, 16, 16}},
    {"zb-v", 8, 15, 2, 97, {16, 16, 16, 16, 16, 16, 16, 16}},
    {"zb-v", 8, 16, 2, 103, {16, 16, 16, 16, 16, 16, 16, 16}},
    {"zb-v", 8, 25, 2, 157, {16, 16, 16, 16, 16, 16, 16, 16}},
    {"zb-v", 16, 1, 2, 66, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
    {"zb-v", 16, 2, 2, 70, {3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},
    {"zb-v", 16, 15, 2, 122, {16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 30}},
    {"zb-v", 16, 16, 2, 126, {17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}},
    {"zb-v", 16, 18, 2, 134, {19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 32, 32}},
    {"zb-v", 16, 23, 2, 154, {24, 25, 26, 27, 28, 29, 30, 31, 32, 32, 32, 32, 32, 32, 32, 32}},
    {"zb-v", 16, 30, 2, 195, {31, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32}},
    {"zb-v", 16, 31, 2, 201, {32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32}},
    {"zb-v", 16, 32, 2, 207, {32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32}},
    {"zb-v", 16, 49, 2, 309, {32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32}},
  };
  return references;
}

std::string describe(const Reference& r) {
  return std::string(r.schedule) + " p=" + std::to_string(r.ranks) + " m=" + std::to_string(r.microbatches) +
         " v=" + std::to_string(r.chunks);
}

int largest(const std::vector<int>& peaks) { return *std::max_element(peaks.begin(), peaks.end()); }

TEST(ReferenceComparisonTest, NoLongerThanPyTorchAndNoMoreMemoryAtEqualLength) {
  for (const Reference& reference : pytorch_references()) {
    const SimulationResult result =
        simulate(make_schedule(reference.schedule, reference.ranks, reference.microbatches, reference.chunks));
    EXPECT_LE(result.makespan, reference.makespan) << describe(reference);
    ASSERT_EQ(result.peak_inflight.size(), reference.peaks.size()) << describe(reference);
    // ZB-V is held to the largest peak over ranks (issue 26 item 7: the memory a run provisions for is the busiest
    // rank's): with few micro-batches its shorter orders let the first ranks hold as many as PyTorch's last one.
    if (std::string(reference.schedule) == "zb-v") {
      EXPECT_LE(largest(result.peak_inflight), largest(reference.peaks)) << describe(reference);
      continue;
    }
    if (result.makespan < reference.makespan) continue;
    for (int rank = 0; rank < reference.ranks; ++rank)
      EXPECT_LE(result.peak_inflight[rank], reference.peaks[rank]) << describe(reference) << " rank " << rank;
  }
}

// The issue's cases, named so that a regression shows which one: ZB-V with p < m < 2p - 1 (Sluice took 40, 72
// and 161 where PyTorch takes 39, 70, 154) and interleaved with m = p (Sluice held 8 on every rank where PyTorch's
// order holds 8, 8, 7, 5). Below 2p - 1 Sluice's ZB-V is shorter than PyTorch's, its largest peak over ranks no
// larger (the grid above checks it); zero_bubble_v_authors_test holds it to the zero-bubble authors' generator
// (p = 16, m = 16: 111 with rank 0 holding 32, as theirs does).
TEST(ReferenceComparisonTest, TheIssueCases) {
  EXPECT_LE(simulate(make_schedule("zb-v", 4, 6, 2)).makespan, 39);
  EXPECT_LT(simulate(make_schedule("zb-v", 8, 10, 2)).makespan, 70);
  EXPECT_LT(simulate(make_schedule("zb-v", 16, 23, 2)).makespan, 154);
  EXPECT_LT(simulate(make_schedule("zb-v", 16, 16, 2)).makespan, 126);
  EXPECT_EQ(simulate(make_schedule("interleaved", 4, 4, 2)).peak_inflight, (std::vector<int>{8, 8, 7, 5}));
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
