// Internal helpers shared by the text and CSV readers.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

[[noreturn]] void fail_at(const std::string& source, int line, const std::string& message);

// Parses a non-negative decimal integer field; `what` names it in the error.
int parse_count(const std::string& text, const std::string& what, const std::string& source, int line);

std::vector<std::string> split(const std::string& text, char separator);  // drops empty pieces when ' '

// Appends words[first..] as skips `<from>><to>` to schedule.skips; a bad one fails naming the line.
void parse_skips(const std::vector<std::string>& words, size_t first, Schedule& schedule, const std::string& source,
                 int line);

// Completes parsing: checks that every rank got a line, then validates, reporting issues at the line of the
// offending rank (`rank_lines[r]`) or of the header.
void finish_parsed_schedule(const Schedule& schedule, const std::string& source, int header_line,
                            const std::map<int, int>& rank_lines);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
