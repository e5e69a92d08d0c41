// The test grid the runtime's promises are checked over: every schedule (with the chunk count it needs),
// recomputation off and full, 1 and 2 data-parallel replicas. Shared by the fidelity and restart tests so the
// two cover exactly the same combinations.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace sluice::testing {

struct ScheduleCase {
  std::string schedule;
  int chunks;
};

inline auto all_schedules() {
  return ::testing::Values(ScheduleCase{"gpipe", 1}, ScheduleCase{"1f1b", 1}, ScheduleCase{"interleaved", 2},
                           ScheduleCase{"zb-h1", 1}, ScheduleCase{"zb-v", 2});
}

// (schedule, recompute, data-parallel replicas)
using GridParam = std::tuple<ScheduleCase, std::string, int>;

inline auto schedule_recompute_dp_grid() {
  return ::testing::Combine(all_schedules(), ::testing::Values("none", "full"), ::testing::Values(1, 2));
}

// gtest parameter names may only hold [A-Za-z0-9_].
inline std::string identifier(std::string name) {
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

inline std::string grid_name(const ::testing::TestParamInfo<GridParam>& info) {
  return identifier(std::get<0>(info.param).schedule + "_" + std::get<1>(info.param) + "_dp" +
                    std::to_string(std::get<2>(info.param)));
}

}  // namespace sluice::testing
