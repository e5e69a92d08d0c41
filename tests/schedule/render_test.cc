#include "core/schedule/render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "core/schedule/chrome_trace.h"
#include "core/schedule/generators.h"

namespace sluice {
namespace schedule {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t found = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++found;
  return found;
}

TEST(RenderTest, AsciiShowsOneRowPerRankWithIdleTimeAsDots) {
  const int p = 4, m = 8;
  const SimulationResult result = simulate(make_schedule("1f1b", p, m));
  const auto rows = lines_of(render_ascii(result));
  ASSERT_EQ(rows.size(), static_cast<size_t>(p));
  // Labels like "3F7" get 4 columns per time unit; the chart spans the makespan.
  const int columns_per_unit = 4;
  for (int rank = 0; rank < p; ++rank) {
    const std::string& row = rows[rank];
    const std::string chart = row.substr(row.find('|') + 1, row.rfind('|') - row.find('|') - 1);
    EXPECT_EQ(chart.size(), static_cast<size_t>(result.makespan * columns_per_unit));
    EXPECT_EQ(std::count(chart.begin(), chart.end(), '.'), static_cast<long>(result.idle[rank] * columns_per_unit));
    EXPECT_EQ(row.rfind("rank " + std::to_string(rank), 0), 0u);
    EXPECT_NE(chart.find(std::to_string(rank) + "F0"), std::string::npos);
    EXPECT_NE(chart.find(std::to_string(rank) + "B7"), std::string::npos);
  }
}

TEST(RenderTest, AsciiCompressesWideCharts) {
  const auto rows = lines_of(render_ascii(simulate(make_schedule("gpipe", 2, 64)), 100));
  for (const auto& row : rows) EXPECT_LE(row.size(), 100u);
}

TEST(RenderTest, SvgHasOneBoxPerComputeAction) {
  const Schedule schedule = make_schedule("zb-h1", 3, 4);
  const std::string svg = render_svg(simulate(schedule));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<rect"), 3u * 4u * 3u);  // 3 ranks x 4 micro-batches x {F, I, W}
  EXPECT_NE(svg.find("<title>2W3</title>"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(RenderTest, ChromeTraceHasCompleteEventsPerAction) {
  const SimulationResult result = simulate(make_schedule("1f1b", 2, 2));
  std::ostringstream out;
  write_chrome_trace(out, trace_events(result, 1000.0));
  const std::string json = out.str();
  EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_EQ(count(json, "\"ph\":\"X\""), 8u);
  EXPECT_EQ(count(json, "\"ph\":\"M\""), 2u);
  // Rank 1's first backward starts after two forwards (2 units = 2000 us) and lasts B = 2 units.
  EXPECT_NE(json.find("{\"name\":\"1B0\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2000,\"dur\":2000}"), std::string::npos)
      << json;
}

TEST(RenderTest, ChromeTraceEscapesNames) {
  std::ostringstream out;
  write_chrome_trace(out, {{0, "a\"b\\c\n", 1.5, 2.0}});
  EXPECT_NE(out.str().find("\"name\":\"a\\\"b\\\\c\\n\""), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\"ts\":1.5,\"dur\":2"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
