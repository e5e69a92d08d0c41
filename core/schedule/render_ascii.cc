#include <algorithm>
#include <cmath>
#include <string>

#include "core/schedule/render.h"

namespace sluice {
namespace schedule {

std::string render_ascii(const SimulationResult& result, int max_columns) {
  double step = 0.0;
  size_t label_width = 1;
  for (const auto& lane : result.timeline)
    for (const TimedAction& timed : lane) {
      const double duration = timed.end - timed.start;
      if (duration > 0.0 && (step == 0.0 || duration < step)) step = duration;
      label_width = std::max(label_width, to_string(timed.action).size() + 1);
    }
  if (step == 0.0 || result.makespan <= 0.0) return "(empty timeline)\n";
  double columns_per_unit = static_cast<double>(label_width) / step;
  const int label_prefix = 8;  // "rank NN |"
  const int available = std::max(20, max_columns - label_prefix - 2);  // two '|' frame the chart
  if (result.makespan * columns_per_unit > available) columns_per_unit = available / result.makespan;
  const int width = static_cast<int>(std::ceil(result.makespan * columns_per_unit));
  std::string chart;
  for (size_t rank = 0; rank < result.timeline.size(); ++rank) {
    std::string row(width, '.');
    for (const TimedAction& timed : result.timeline[rank]) {
      const int begin = static_cast<int>(std::lround(timed.start * columns_per_unit));
      const int end = std::min(width, static_cast<int>(std::lround(timed.end * columns_per_unit)));
      if (end <= begin) continue;
      const std::string label = to_string(timed.action);
      for (int column = begin; column < end; ++column) {
        const size_t offset = column - begin;
        // Boxes too narrow for the label keep the kind letter, which is what one looks for in a bubble chart.
        row[column] = end - begin >= static_cast<int>(label.size()) ? (offset < label.size() ? label[offset] : ' ')
                                                                     : (offset == 0 ? kind_name(timed.action.kind)[0] : ' ');
      }
    }
    std::string prefix = "rank " + std::to_string(rank);
    prefix.resize(label_prefix - 1, ' ');
    chart += prefix + "|" + row + "|\n";
  }
  return chart;
}

}  // namespace schedule
}  // namespace sluice
