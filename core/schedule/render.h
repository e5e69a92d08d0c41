// Views of a simulated timeline: a terminal chart, an SVG picture and Chrome-trace events.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/chrome_trace.h"
#include "core/schedule/simulator.h"

namespace sluice {
namespace schedule {

// One row per rank, time to the right; each action shows as its text (e.g. `2F0`) padded to its duration,
// idle time as dots. The time step is the shortest action; charts wider than `max_columns` are compressed.
std::string render_ascii(const SimulationResult& result, int max_columns = 240);

// Self-contained SVG: one lane per rank, one coloured box per action labelled with its text.
std::string render_svg(const SimulationResult& result);

// One event per compute action; `microseconds_per_unit` converts simulated time units.
std::vector<TraceEvent> trace_events(const SimulationResult& result, double microseconds_per_unit = 1.0);

}  // namespace schedule
}  // namespace sluice
