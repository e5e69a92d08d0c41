// Pins the schedule engine's costed results to those of the code before the issue 15 speed work (2026-11-26):
// for every grid point and several cost shapes, a fingerprint of both lowerings' lists and the simulated, posting-
// order and blocking makespans. The speed work changed data layouts and queues only, never a result, and this is the
// comparison that says so. To regenerate after an intended change of results: run with SLUICE_WRITE_GOLDEN=<dir>,
// check the other schedule tests still pass, copy the file over and say in the commit why results changed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/replay.h"
#include "core/schedule/simulator.h"
#include "tests/schedule/test_grid.h"

namespace sluice {
namespace schedule {
namespace {

const char kGolden[] = "lowering_fingerprints.txt";

using testing::costs_of;

// FNV-1a over every action of every list, with a separator per list, so that moving one action changes it.
uint64_t fingerprint(const Schedule& schedule) {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&](uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ull;
  };
  for (const auto& list : schedule.actions) {
    for (const Action& a : list)
      mix((static_cast<uint64_t>(a.stage) << 40) ^ (static_cast<uint64_t>(a.kind) << 32) ^
          static_cast<uint32_t>(a.microbatch));
    mix(~uint64_t{0});
  }
  return hash;
}

uint64_t fingerprint(const SimulationResult& result) {
  Schedule timed;  // the timeline's order, with the start times folded into the micro-batch field's hash
  uint64_t hash = 0;
  for (const auto& rank : result.timeline) {
    timed.actions.emplace_back();
    for (const TimedAction& t : rank) {
      timed.actions.back().push_back(t.action);
      hash = hash * 31 + static_cast<uint64_t>(t.start * 1024) + (static_cast<uint64_t>(t.end * 1024) << 20);
    }
  }
  return hash ^ fingerprint(timed);
}

std::string line_for(const testing::GridPoint& point, const CostModel& costs) {
  const Schedule compute = make_schedule(point.name, point.ranks, point.microbatches, point.chunks);
  const Schedule costed = lower(compute, costs);
  const SimulationResult simulated = simulate(compute, costs);
  char line[512];
  std::snprintf(line, sizeof line,
                "%s F=%g I=%g W=%g latency=%g: unit %016llx costed %016llx timeline %016llx makespan %.17g "
                "posting %.17g blocking %.17g",
                testing::describe(point).c_str(), costs.forward, costs.backward_input, costs.backward_weight,
                costs.latency, static_cast<unsigned long long>(fingerprint(lower(compute))),
                static_cast<unsigned long long>(fingerprint(costed)),
                static_cast<unsigned long long>(fingerprint(simulated)), simulated.makespan,
                compute.ranks > 1 ? replay_makespan(costed, costs, TransferMode::kPostingOrder) : simulated.makespan,
                compute.ranks > 1 ? replay_makespan(costed, costs, TransferMode::kBlocking) : simulated.makespan);
  return line;
}

// The shared grid plus larger ranks, where the queues and tables hold more than one block of micro-batches.
std::vector<testing::GridPoint> points() {
  std::vector<testing::GridPoint> all = testing::valid_grid();
  for (int p : {8, 16})
    for (int m : {7, 16, 17, 33})
      for (const auto& [name, chunks] : std::vector<std::pair<std::string, int>>{
               {"gpipe", 1}, {"1f1b", 1}, {"zb-h1", 1}, {"zb-v", 2}, {"interleaved", 2}, {"interleaved", 3}})
        all.push_back({name, p, m, chunks});
  return all;
}

TEST(LoweringFingerprintTest, ResultsMatchThoseBeforeTheSpeedWork) {
  std::ostringstream actual;
  for (const CostModel& costs : {CostModel{}, costs_of(2, 1, 0.5), costs_of(1, 2, 1), costs_of(1, 1, 3),
                                 costs_of(1, 1, 1, 0.25), costs_of(1.5, 0.75, 0.3, 0.1)})
    for (const auto& point : points()) actual << line_for(point, costs) << "\n";
  if (const char* dir = std::getenv("SLUICE_WRITE_GOLDEN"))
    std::ofstream(std::string(dir) + "/" + kGolden) << actual.str();
  std::ifstream in(std::string("tests/schedule/golden/") + kGolden);
  ASSERT_TRUE(in) << "missing golden file " << kGolden;
  std::string expected_line, actual_line;
  std::istringstream got(actual.str());
  int lines = 0;
  while (std::getline(in, expected_line)) {
    ASSERT_TRUE(std::getline(got, actual_line)) << "fewer results than golden lines (" << lines << ")";
    EXPECT_EQ(actual_line, expected_line);
    ++lines;
  }
  EXPECT_FALSE(std::getline(got, actual_line)) << "more results than golden lines (" << lines << ")";
  EXPECT_GT(lines, 0);
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
