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

// Under AddressSanitizer (CI's asan configuration) the grids shrink to a cover: every schedule once, and each
// recompute policy and replica count with more than one schedule. Why: the sanitizer looks for memory errors,
// which any case that runs a code path finds; the full grid (bit-for-bit equality of every combination) runs in
// the default configuration, several times cheaper than under the sanitizers (docs/CI.md, "Time budget").
#if defined(__SANITIZE_ADDRESS__)
#define SLUICE_TEST_GRID_COVER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLUICE_TEST_GRID_COVER 1
#endif
#endif

inline auto schedule_recompute_dp_grid() {
#ifdef SLUICE_TEST_GRID_COVER
  return ::testing::Values(GridParam{{"gpipe", 1}, "none", 2}, GridParam{{"1f1b", 1}, "full", 1},
                           GridParam{{"interleaved", 2}, "full", 2}, GridParam{{"zb-h1", 1}, "none", 1},
                           GridParam{{"zb-v", 2}, "full", 2});
#else
  return ::testing::Combine(all_schedules(), ::testing::Values("none", "full"), ::testing::Values(1, 2));
#endif
}

// (schedule, recompute, 1 replica): every schedule with recompute off and full; under asan each schedule once.
inline auto schedule_recompute_grid_one_replica() {
#ifdef SLUICE_TEST_GRID_COVER
  return ::testing::Values(GridParam{{"gpipe", 1}, "full", 1}, GridParam{{"1f1b", 1}, "none", 1},
                           GridParam{{"interleaved", 2}, "full", 1}, GridParam{{"zb-h1", 1}, "full", 1},
                           GridParam{{"zb-v", 2}, "none", 1});
#else
  return ::testing::Combine(all_schedules(), ::testing::Values("none", "full"), ::testing::Values(1));
#endif
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
