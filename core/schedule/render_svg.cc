#include <sstream>

#include "core/schedule/render.h"

namespace sluice {
namespace schedule {
namespace {

const char* colour_of(ActionKind kind) {
  switch (kind) {
    case ActionKind::F: return "#4e79a7";
    case ActionKind::B: return "#f28e2b";
    case ActionKind::I: return "#e15759";
    case ActionKind::W: return "#59a14f";
    default: return "#bab0ac";
  }
}

}  // namespace

std::string render_svg(const SimulationResult& result) {
  constexpr double kUnitWidth = 40.0, kLaneHeight = 28.0, kLeftMargin = 70.0, kTopMargin = 10.0;
  const double width = kLeftMargin + result.makespan * kUnitWidth + 10.0;
  const double height = kTopMargin * 2 + result.timeline.size() * kLaneHeight;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"monospace\" font-size=\"11\">\n";
  for (size_t rank = 0; rank < result.timeline.size(); ++rank) {
    const double y = kTopMargin + rank * kLaneHeight;
    svg << "<text x=\"4\" y=\"" << y + kLaneHeight * 0.65 << "\">rank " << rank << "</text>\n";
    for (const TimedAction& timed : result.timeline[rank]) {
      const double x = kLeftMargin + timed.start * kUnitWidth;
      const double w = (timed.end - timed.start) * kUnitWidth;
      svg << "<rect x=\"" << x << "\" y=\"" << y + 2 << "\" width=\"" << w << "\" height=\"" << kLaneHeight - 4
          << "\" fill=\"" << colour_of(timed.action.kind) << "\" stroke=\"#333\"><title>" << to_string(timed.action)
          << "</title></rect>\n";
      svg << "<text x=\"" << x + 3 << "\" y=\"" << y + kLaneHeight * 0.65 << "\" fill=\"white\">"
          << to_string(timed.action) << "</text>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

std::vector<TraceEvent> trace_events(const SimulationResult& result, double microseconds_per_unit) {
  std::vector<TraceEvent> events;
  for (size_t rank = 0; rank < result.timeline.size(); ++rank)
    for (const TimedAction& timed : result.timeline[rank])
      events.push_back({static_cast<int>(rank), to_string(timed.action), timed.start * microseconds_per_unit,
                        (timed.end - timed.start) * microseconds_per_unit});
  return events;
}

}  // namespace schedule
}  // namespace sluice
