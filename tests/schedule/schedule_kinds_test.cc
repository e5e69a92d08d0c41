// The schedule-kind table (core/schedule/schedule_kinds.h): names round-trip, each kind's chunk rule is what
// make_schedule enforces, and each kind's default chunk count builds a schedule.
#include "core/schedule/schedule_kinds.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/common/error.h"
#include "core/schedule/generators.h"

namespace sluice {
namespace schedule {
namespace {

TEST(ScheduleKindsTest, NamesRoundTripAndAreUnique) {
  std::set<std::string> seen;
  for (const ScheduleKindInfo& info : schedule_kinds()) {
    EXPECT_TRUE(seen.insert(info.name).second) << info.name << " twice";
    ASSERT_TRUE(find_schedule_kind(info.name).has_value()) << info.name;
    EXPECT_EQ(*find_schedule_kind(info.name), info.kind);
    EXPECT_STREQ(schedule_kind_name(info.kind), info.name);
  }
  EXPECT_EQ(schedule_names().size(), schedule_kinds().size());
  EXPECT_EQ(schedule_names_text(), "gpipe, 1f1b, interleaved, zb-h1, zb-v");
  EXPECT_FALSE(find_schedule_kind("auto").has_value()) << "auto is a config choice, not a schedule";
  EXPECT_FALSE(find_schedule_kind("ZB-V").has_value());
}

TEST(ScheduleKindsTest, TheChunkRuleIsWhatMakeScheduleEnforces) {
  for (const ScheduleKindInfo& info : schedule_kinds()) {
    for (int chunks = 1; chunks <= 4; ++chunks) {
      SCOPED_TRACE(std::string(info.name) + " chunks " + std::to_string(chunks));
      bool built = true;
      try {
        const Schedule schedule = make_schedule(info.name, 4, 8, chunks);
        EXPECT_EQ(schedule.chunks, chunks);
        EXPECT_EQ(schedule.name, info.name);
      } catch (const Error& error) {
        built = false;
        EXPECT_NE(std::string(error.what()).find(chunks_requirement(info.kind)), std::string::npos) << error.what();
      }
      EXPECT_EQ(built, chunks_allowed(info.kind, chunks));
    }
    EXPECT_TRUE(chunks_allowed(info.kind, default_chunks(info.kind))) << info.name;
  }
  EXPECT_EQ(default_chunks(ScheduleKind::kOneFOneB), 1);
  EXPECT_EQ(default_chunks(ScheduleKind::kInterleaved), 2);
  EXPECT_EQ(default_chunks(ScheduleKind::kZeroBubbleV), 2);
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
