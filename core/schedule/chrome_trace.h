// Chrome-trace / Perfetto JSON writer (open the file in ui.perfetto.dev or chrome://tracing). Independent of
// schedules so the runtime can write its measured timeline with the same code.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sluice {
namespace schedule {

struct TraceEvent {
  int rank = 0;          // becomes pid and tid, so each rank gets its own track
  std::string name;      // e.g. the action text "2F0"
  double start_us = 0.0;
  double duration_us = 0.0;
};

// Writes {"traceEvents":[...]} with one complete ("ph":"X") event per entry plus process-name metadata
// ("rank N") for each rank that appears.
void write_chrome_trace(std::ostream& out, const std::vector<TraceEvent>& events);

// JSON string literal (with quotes) for `text`.
std::string json_quote(const std::string& text);

}  // namespace schedule
}  // namespace sluice
