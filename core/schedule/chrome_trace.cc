#include "core/schedule/chrome_trace.h"

#include <cstdio>
#include <set>

namespace sluice {
namespace schedule {

std::string json_quote(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\t': quoted += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          quoted += escaped;
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

void write_chrome_trace(std::ostream& out, const std::vector<TraceEvent>& events) {
  out << "{\"traceEvents\":[";
  bool first = true;
  auto separator = [&]() -> std::ostream& {
    out << (first ? "\n" : ",\n");
    first = false;
    return out;
  };
  std::set<int> ranks;
  for (const TraceEvent& event : events) ranks.insert(event.rank);
  for (int rank : ranks)
    separator() << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << rank << ",\"tid\":" << rank
                << ",\"args\":{\"name\":\"rank " << rank << "\"}}";
  for (const TraceEvent& event : events)
    separator() << "{\"name\":" << json_quote(event.name) << ",\"ph\":\"X\",\"pid\":" << event.rank
                << ",\"tid\":" << event.rank << ",\"ts\":" << event.start_us << ",\"dur\":" << event.duration_us
                << "}";
  out << "\n]}\n";
}

}  // namespace schedule
}  // namespace sluice
