#include "core/schedule/schedule_io.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "core/common/error.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"

namespace sluice {
namespace schedule {
namespace {

void expect_same(const Schedule& a, const Schedule& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.chunks, b.chunks);
  EXPECT_EQ(a.microbatches, b.microbatches);
  EXPECT_EQ(a.stage_to_rank, b.stage_to_rank);
  EXPECT_EQ(a.actions, b.actions);
}

std::vector<Schedule> samples() {
  return {make_schedule("gpipe", 3, 4), make_schedule("1f1b", 4, 6), make_schedule("interleaved", 2, 4, 3),
          make_schedule("zb-h1", 3, 5), make_schedule("zb-v", 3, 5, 2), lower(make_schedule("zb-v", 3, 5, 2)),
          lower(make_schedule("interleaved", 2, 4, 2))};
}

TEST(ScheduleIoTest, TextRoundTripsThroughTheIr) {
  for (const Schedule& schedule : samples()) {
    const std::string text = to_text(schedule);
    const Schedule parsed = parse_text(text);
    expect_same(parsed, schedule);
    EXPECT_EQ(to_text(parsed), text);
  }
}

TEST(ScheduleIoTest, CsvRoundTripsThroughTheIr) {
  for (const Schedule& schedule : samples()) expect_same(parse_csv(to_csv(schedule)), schedule);
}

TEST(ScheduleIoTest, HandWrittenTextWithCommentsAndDefaultPlacement) {
  const Schedule parsed = parse_text(
      "# my schedule\n\nschedule mine ranks 2 chunks 1 microbatches 1\nrank 1: 1F0 1B0\n  rank 0:  0F0\t0B0\n");
  EXPECT_EQ(parsed.stage_to_rank, (std::vector<int>{0, 1}));
  EXPECT_EQ(parsed.actions[0], (std::vector<Action>{{0, ActionKind::F, 0}, {0, ActionKind::B, 0}}));
}

void expect_parse_error(const std::string& content, const std::string& fragment, bool csv = false) {
  try {
    csv ? parse_csv(content, "in.csv") : parse_text(content, "in.txt");
    ADD_FAILURE() << "accepted; expected " << fragment;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(ScheduleIoTest, ErrorsNameTheLine) {
  const std::string header = "schedule x ranks 2 chunks 1 microbatches 1\n";
  expect_parse_error("", "in.txt:1: missing the 'schedule");
  expect_parse_error("rank 0: 0F0\n", "in.txt:1: the first line must be the 'schedule ...' header");
  expect_parse_error("schedule x ranks two chunks 1 microbatches 1\n", "in.txt:1: ranks must be a non-negative integer, got 'two'");
  expect_parse_error(header + "rank 0: 0F0 0X0\n", "in.txt:2: bad action '0X0'");
  expect_parse_error(header + "rank 0: 0F0 0B0\nrank 0: 0F0\n", "in.txt:3: rank 0 already listed on line 2");
  expect_parse_error(header + "rank 0: 0F0 0B0\n", "in.txt:1: the header declares 2 ranks but no line gives the actions of rank 1");
  expect_parse_error(header + "rank 0: 0F0 0B0\nrank 5: 1F0\n", "in.txt:3: rank 5 is outside 0..1");
  expect_parse_error(header + "stage_to_rank 0\n", "in.txt:2: stage_to_rank lists 1 ranks, expected one per stage (2)");
  expect_parse_error(header + "bogus\n", "in.txt:2: unknown line starting with 'bogus'");
  // Semantic problems point at the line of the rank they concern.
  expect_parse_error(header + "rank 0: 0F0 0B0\nrank 1: 1B0 1F0\n", "in.txt:3: rank 1, action 0 (1B0): runs before 1F0");
  expect_parse_error("schedule,ranks,chunks,microbatches,stage_to_rank\nx,1,1,1,0\nrank,actions\n0,0F0,0Q0\n",
                     "in.csv:4: bad action '0Q0'", true);
  expect_parse_error("schedule,ranks\n", "in.csv:1: expected the header row", true);
}

TEST(ScheduleIoTest, FilesPickTheFormatFromTheExtension) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp ? tmp : "/tmp";
  const Schedule schedule = lower(make_schedule("zb-h1", 3, 4));
  for (const std::string name : {"/s.txt", "/s.csv"}) {
    save_schedule(schedule, dir + name);
    expect_same(load_schedule(dir + name), schedule);
  }
  std::ifstream csv(dir + "/s.csv");
  std::string first_line;
  std::getline(csv, first_line);
  EXPECT_EQ(first_line, "schedule,ranks,chunks,microbatches,stage_to_rank");
  try {
    load_schedule(dir + "/does-not-exist.txt");
    ADD_FAILURE() << "missing file loaded";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kIo);
  }
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
