#include "core/schedule/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/schedule/generators.h"
#include "core/schedule/schedule_io.h"

namespace sluice {
namespace schedule {
namespace {

// Closed forms from the literature (docs: /work/shared/notes/schedules.md) with F = I = W = 1, no latency.
TEST(SimulatorTest, GpipeAndOneFOneBMatchTheClosedForms) {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 16; ++m) {
      for (const char* name : {"gpipe", "1f1b"}) {
        const SimulationResult result = simulate(make_schedule(name, p, m, 1));
        const double per_microbatch = 3.0;  // F + B, B = I + W
        EXPECT_EQ(result.makespan, (m + p - 1) * per_microbatch) << name << " p=" << p << " m=" << m;
        EXPECT_DOUBLE_EQ(result.bubble_fraction, static_cast<double>(p - 1) / (m + p - 1))
            << name << " p=" << p << " m=" << m;
        for (int s = 0; s < p; ++s) {
          const int expected_peak = name == std::string("gpipe") ? m : std::min(m, p - s);
          EXPECT_EQ(result.peak_inflight[s], expected_peak) << name << " p=" << p << " m=" << m << " rank " << s;
          EXPECT_EQ(result.idle[s], (p - 1) * per_microbatch) << name << " p=" << p << " m=" << m;
        }
      }
    }
  }
}

// Interleaved 1F1B for any m (rounds of max(1, m / p) micro-batches, the larger rounds first). With m >= p the
// literature's closed form holds for every m, not only multiples of p. With m < p (one round) the second chunk of
// micro-batch 0 waits for it to pass all p ranks: (v-1)p + m + p - 1 steps. Rank r holds its warm-up plus one:
// (v-1)g + 2(p-1-r) + 1 for a first round of g micro-batches, at most all m·v.
TEST(SimulatorTest, InterleavedMatchesTheClosedFormsForAnyMicrobatchCount) {
  for (int p = 1; p <= 6; ++p)
    for (int v = 2; v <= 4; ++v)
      for (int m = 1; m <= 4 * p + 3; ++m) {
        const SimulationResult result = simulate(make_schedule("interleaved", p, m, v));
        const int steps = m >= p ? v * m + p - 1 : (v - 1) * p + m + p - 1;
        EXPECT_EQ(result.makespan, steps * 3.0) << "p=" << p << " v=" << v << " m=" << m;
        if (m % p == 0) {
          EXPECT_DOUBLE_EQ(result.bubble_fraction, static_cast<double>(p - 1) / (v * m + p - 1))
              << "p=" << p << " v=" << v << " m=" << m;
        }
        const int rounds = std::max(1, m / p);
        const int first_round = (m + rounds - 1) / rounds;
        for (int r = 0; r < p; ++r)
          EXPECT_EQ(result.peak_inflight[r], std::min(m * v, (v - 1) * first_round + 2 * (p - 1 - r) + 1))
              << "p=" << p << " v=" << v << " m=" << m << " rank " << r;
      }
}

TEST(SimulatorTest, ZeroBubbleH1CutsTheBubbleToAThirdAtOneFOneBMemory) {
  for (int p = 1; p <= 8; ++p)
    for (int m = p; m <= 3 * p + 2; ++m) {
      const SimulationResult h1 = simulate(make_schedule("zb-h1", p, m, 1));
      const SimulationResult one_f_one_b = simulate(make_schedule("1f1b", p, m, 1));
      const double f = 1, i = 1, w = 1;
      for (int rank = 0; rank < p; ++rank) {
        EXPECT_EQ(h1.idle[rank], (p - 1) * (f + i + w - 2 * w)) << "p=" << p << " m=" << m << " rank " << rank;
        EXPECT_EQ(h1.idle[rank] * 3, one_f_one_b.idle[rank]) << "p=" << p << " m=" << m;
      }
      // The paper's memory claim: the largest stash on any rank equals 1F1B's (its rank 0 holds p).
      EXPECT_EQ(*std::max_element(h1.peak_inflight.begin(), h1.peak_inflight.end()),
                *std::max_element(one_f_one_b.peak_inflight.begin(), one_f_one_b.peak_inflight.end()))
          << "p=" << p << " m=" << m;
    }
}

// With fewer micro-batches than ranks the I chain of micro-batch 0 ends on rank 0 at 2p - 1; its m I's and W's
// then alternate (each I arrives as the W before it ends): 2p + 2m - 1 with F = I = W = 1, against 1F1B's 3(m+p-1).
TEST(SimulatorTest, ZeroBubbleH1WithFewerMicrobatchesThanRanks) {
  for (int p = 2; p <= 8; ++p)
    for (int m = 1; m < p; ++m) {
      const SimulationResult h1 = simulate(make_schedule("zb-h1", p, m, 1));
      EXPECT_EQ(h1.makespan, 2 * p + 2 * m - 1) << "p=" << p << " m=" << m;
      for (int rank = 0; rank < p; ++rank) EXPECT_EQ(h1.peak_inflight[rank], m) << "p=" << p << " m=" << m;
    }
}

TEST(SimulatorTest, ZeroBubbleVBeatsH1AtOneFOneBMemory) {
  for (int p = 2; p <= 8; ++p)
    for (int m = p; m <= 3 * p + 2; ++m) {
      const SimulationResult v = simulate(make_schedule("zb-v", p, m, 2));
      const SimulationResult h1 = simulate(make_schedule("zb-h1", p, m, 1));
      const SimulationResult one_f_one_b = simulate(make_schedule("1f1b", p, m, 1));
      if (m > p) {
        EXPECT_LT(v.bubble_fraction, h1.bubble_fraction) << "p=" << p << " m=" << m;
      } else {
        EXPECT_LE(v.bubble_fraction, h1.bubble_fraction) << "p=" << p << " m=" << m;
      }
      // A ZB-V chunk holds half a 1F1B stage, so two in-flight pairs weigh one 1F1B micro-batch.
      const int one_f_one_b_peak = *std::max_element(one_f_one_b.peak_inflight.begin(), one_f_one_b.peak_inflight.end());
      for (int rank = 0; rank < p; ++rank) EXPECT_LE(v.peak_inflight[rank], 2 * one_f_one_b_peak) << "p=" << p;
    }
}

// Equal stashes reproduce the in-flight count times the stash; unequal ones weigh each (stage, micro-batch) pair.
TEST(SimulatorTest, PeakStashWeighsInflightPairsByTheirStage) {
  for (const char* name : {"1f1b", "zb-h1"}) {
    const Schedule schedule = make_schedule(name, 4, 6, 1);
    const std::vector<int> inflight = peak_inflight(schedule);
    const std::vector<double> peaks = peak_stash(schedule, std::vector<double>(4, 10.0));
    for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(peaks[rank], 10.0 * inflight[rank]) << name << " rank " << rank;
  }
  // ZB-V p=2 m=1: rank 0 holds stage 0 (F0 first) and stage 3; both are in flight from 3F0 until 0W0.
  const Schedule v = make_schedule("zb-v", 2, 1, 2);
  const std::vector<double> peaks = peak_stash(v, {1.0, 20.0, 300.0, 4000.0});
  EXPECT_EQ(peaks[0], 4001.0);
  EXPECT_EQ(peaks[1], 320.0);
  EXPECT_THROW(peak_stash(v, {1.0, 2.0}), Error);
}

TEST(SimulatorTest, LatencyAndBandwidthDelayCrossRankHandOvers) {
  // P=2, M=1: F on rank 0 [0,1], message, F on rank 1, B (=I+W=2) on rank 1, message, B on rank 0.
  CostModel costs;
  costs.latency = 0.25;
  costs.bytes_per_message = 100;
  costs.bandwidth = 400;  // +0.25 per message
  const SimulationResult result = simulate(make_schedule("1f1b", 2, 1, 1), costs);
  const double message = 0.5;
  EXPECT_DOUBLE_EQ(result.makespan, 1 + message + 1 + 2 + message + 2);
  EXPECT_DOUBLE_EQ(result.timeline[1][0].start, 1 + message);
  EXPECT_DOUBLE_EQ(result.busy[0], 3.0);
  EXPECT_DOUBLE_EQ(result.idle[0], result.makespan - 3.0);
}

TEST(SimulatorTest, UnequalCostsShiftTheTimeline) {
  CostModel costs;
  costs.forward = 2;
  costs.backward_input = 3;
  costs.backward_weight = 5;
  const SimulationResult result = simulate(make_schedule("gpipe", 1, 2, 1), costs);
  EXPECT_DOUBLE_EQ(result.makespan, 2 * (2 + 3 + 5));
  EXPECT_DOUBLE_EQ(result.timeline[0][2].start, 4);  // first B after two forwards
}

// Measured stages differ (the last computes the loss, the first skips the input gradient). With a last stage
// slower than the first, 1F1B on 2 ranks is bound by rank 1 from its first F on: F0 + m (F1 + B1) + B0.
TEST(SimulatorTest, PerStageCostsMakeTheSlowerStageTheBound) {
  CostModel costs;
  costs.per_stage = {{1.0, 3.0, 0.0}, {2.0, 4.0, 1.0}};  // F, I, W per stage: B0 = 3, B1 = 5
  for (int m : {1, 4, 7}) {
    const SimulationResult result = simulate(make_schedule("1f1b", 2, m, 1), costs);
    EXPECT_DOUBLE_EQ(result.makespan, 1.0 + m * (2.0 + 5.0) + 3.0) << "m=" << m;
    EXPECT_DOUBLE_EQ(result.busy[0], m * (1.0 + 3.0)) << "m=" << m;
    EXPECT_DOUBLE_EQ(result.busy[1], m * (2.0 + 5.0)) << "m=" << m;
  }
}

// Per-stage entries equal to the uniform costs give the uniform run, action for action.
TEST(SimulatorTest, PerStageCostsEqualToTheUniformOnesChangeNothing) {
  CostModel uniform;
  uniform.forward = 1.5;
  uniform.backward_input = 1.0;
  uniform.backward_weight = 0.75;
  for (const char* name : {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v"}) {
    const int chunks = name == std::string("interleaved") || name == std::string("zb-v") ? 2 : 1;
    const Schedule schedule = make_schedule(name, 4, 8, chunks);
    CostModel staged = uniform;
    staged.per_stage.assign(schedule.num_stages(), {1.5, 1.0, 0.75});
    const SimulationResult a = simulate(schedule, uniform), b = simulate(schedule, staged);
    EXPECT_EQ(a.makespan, b.makespan) << name;
    for (int rank = 0; rank < schedule.ranks; ++rank) {
      ASSERT_EQ(a.timeline[rank].size(), b.timeline[rank].size()) << name;
      for (size_t i = 0; i < a.timeline[rank].size(); ++i) {
        EXPECT_EQ(a.timeline[rank][i].start, b.timeline[rank][i].start) << name << " rank " << rank << " #" << i;
      }
    }
  }
}

TEST(SimulatorTest, PerStageCostsMustCoverEveryStageAndBeValid) {
  CostModel short_list;
  short_list.per_stage = {{1, 1, 1}};
  try {
    simulate(make_schedule("1f1b", 2, 2, 1), short_list);
    ADD_FAILURE() << "one entry accepted for two stages";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("per_stage has 1 entries but the schedule has 2 stages"),
              std::string::npos)
        << error.what();
  }
  CostModel negative;
  negative.per_stage = {{1, 1, 1}, {1, -2, 1}};
  try {
    simulate(make_schedule("1f1b", 2, 2, 1), negative);
    ADD_FAILURE() << "a negative stage cost accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("backward-input cost of stage 1"), std::string::npos) << error.what();
  }
}

TEST(SimulatorTest, RejectsBadCostsAndSchedulesThatCannotFinish) {
  CostModel negative;
  negative.latency = -1;
  EXPECT_THROW(simulate(make_schedule("1f1b", 2, 2, 1), negative), Error);
  CostModel bytes_without_bandwidth;
  bytes_without_bandwidth.bytes_per_message = 10;
  EXPECT_THROW(simulate(make_schedule("1f1b", 2, 2, 1), bytes_without_bandwidth), Error);
  const Schedule crossed = parse_text(
      "schedule x ranks 2 chunks 1 microbatches 2\nrank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F0 1B0 1F1 1B1\n");
  Schedule broken = crossed;
  std::swap(broken.actions[1][0], broken.actions[1][2]);  // rank 1 wants 1F1 before rank 0 can send it
  try {
    simulate(broken);
    ADD_FAILURE() << "deadlocked schedule simulated";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("waits forever"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
