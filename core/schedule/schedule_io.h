// Plain-text and CSV forms of a schedule, so users can inspect generated schedules or supply their own.
//
// Text:                                         CSV (one row per rank, one cell per action):
//   # comment lines and blank lines are ignored   schedule,ranks,chunks,microbatches,stage_to_rank
//   schedule 1f1b ranks 2 chunks 1 microbatches 2 1f1b,2,1,2,0 1
//   stage_to_rank 0 1                             rank,actions
//   rank 0: 0F0 0F1 0B0 0B1                       0,0F0,0F1,0B0,0B1
//   rank 1: 1F0 1B0 1F1 1B1                       1,1F0,1B0,1F1,1B1
// `stage_to_rank` is optional in text (default: looped placement, stage s on rank s % ranks). An optional line
// `skips 0>3 1>2` (CSV: a row `skips,0>3,1>2` before `rank,actions`) lists Schedule::skips.
// Loading validates the schedule; every error names the line (and rank/action) that is wrong.
#pragma once

#include <string>

#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {

std::string to_text(const Schedule& schedule);
std::string to_csv(const Schedule& schedule);

// `source` names the input in error messages (a path, or e.g. "<stdin>").
// Throws sluice::Error(kInvalidArgument) with "source:line: ..." on malformed or invalid schedules.
Schedule parse_text(const std::string& content, const std::string& source = "<text>");
Schedule parse_csv(const std::string& content, const std::string& source = "<csv>");

// Pick the format from the extension: ".csv" is CSV, anything else text. Throws kIo when the file cannot be
// opened or written.
void save_schedule(const Schedule& schedule, const std::string& path);
Schedule load_schedule(const std::string& path);

}  // namespace schedule
}  // namespace sluice
