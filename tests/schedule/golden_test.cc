// Compares generated schedules with hand-inspected golden files in tests/schedule/golden/. To regenerate after
// an intended change: run with SLUICE_WRITE_GOLDEN=<dir>, inspect the diff by eye, copy the files over.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/render.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/simulator.h"

namespace sluice {
namespace schedule {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void expect_golden(const std::string& file, const std::string& actual) {
  if (const char* dir = std::getenv("SLUICE_WRITE_GOLDEN")) std::ofstream(std::string(dir) + "/" + file) << actual;
  const std::string expected = read_file("tests/schedule/golden/" + file);
  ASSERT_FALSE(expected.empty()) << "missing golden file " << file;
  EXPECT_EQ(actual, expected) << file;
}

TEST(GoldenTest, ComputeSchedules) {
  expect_golden("gpipe_p2_m3.txt", to_text(make_schedule("gpipe", 2, 3)));
  expect_golden("1f1b_p4_m6.txt", to_text(make_schedule("1f1b", 4, 6)));
  expect_golden("interleaved_p2_m4_v2.txt", to_text(make_schedule("interleaved", 2, 4, 2)));
  expect_golden("zb-h1_p3_m4.txt", to_text(make_schedule("zb-h1", 3, 4)));
  expect_golden("zb-v_p2_m3.txt", to_text(make_schedule("zb-v", 2, 3, 2)));
}

TEST(GoldenTest, LoweredSchedules) {
  expect_golden("1f1b_p3_m3_lowered.txt", to_text(lower(make_schedule("1f1b", 3, 3))));
  expect_golden("zb-v_p2_m2_lowered.txt", to_text(lower(make_schedule("zb-v", 2, 2, 2))));
}

// A skip from the first stage to the last on each schedule kind (zb-v's first and last stage share rank 0, so it
// also has a skip from stage 0 to stage 2, on rank 1): the skip messages between the two ranks only.
Schedule with_skips(Schedule compute, std::vector<SkipEdge> skips) {
  compute.skips = std::move(skips);
  return compute;
}

TEST(GoldenTest, LoweredSchedulesWithAFirstToLastSkip) {
  expect_golden("skip_gpipe_p3_m2_lowered.txt", to_text(lower(with_skips(make_schedule("gpipe", 3, 2), {{0, 2}}))));
  expect_golden("skip_1f1b_p3_m3_lowered.txt", to_text(lower(with_skips(make_schedule("1f1b", 3, 3), {{0, 2}}))));
  expect_golden("skip_interleaved_p2_m2_v2_lowered.txt",
                to_text(lower(with_skips(make_schedule("interleaved", 2, 2, 2), {{0, 3}}))));
  expect_golden("skip_zb-h1_p3_m2_lowered.txt", to_text(lower(with_skips(make_schedule("zb-h1", 3, 2), {{0, 2}}))));
  expect_golden("skip_zb-v_p2_m2_lowered.txt",
                to_text(lower(with_skips(make_schedule("zb-v", 2, 2, 2), {{0, 3}, {0, 2}}))));
}

TEST(GoldenTest, AsciiTimeline) {
  expect_golden("1f1b_p4_m8_timeline.txt", render_ascii(simulate(make_schedule("1f1b", 4, 8))));
  expect_golden("zb-h1_p4_m8_timeline.txt", render_ascii(simulate(make_schedule("zb-h1", 4, 8))));
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
