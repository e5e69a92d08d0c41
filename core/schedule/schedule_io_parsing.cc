#include "core/schedule/schedule_io_parsing.h"

#include "core/common/error.h"
#include "core/schedule/validator.h"

namespace sluice {
namespace schedule {
namespace detail {

void fail_at(const std::string& source, int line, const std::string& message) {
  throw Error(ErrorCode::kInvalidArgument, source + ":" + std::to_string(line) + ": " + message);
}

int parse_count(const std::string& text, const std::string& what, const std::string& source, int line) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    fail_at(source, line, what + " must be a non-negative integer, got '" + text + "'");
  return std::stoi(text);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> pieces;
  std::string piece;
  for (char c : text) {
    const bool breaks = c == separator || (separator == ' ' && (c == '\t' || c == '\r'));
    if (breaks) {
      if (separator != ' ' || !piece.empty()) pieces.push_back(piece);
      piece.clear();
    } else {
      piece += c;
    }
  }
  if (separator != ' ' || !piece.empty()) pieces.push_back(piece);
  return pieces;
}

void parse_skips(const std::vector<std::string>& words, size_t first, Schedule& schedule, const std::string& source,
                 int line) {
  for (size_t i = first; i < words.size(); ++i) {
    try {
      schedule.skips.push_back(parse_skip_edge(words[i]));
    } catch (const Error& error) {
      fail_at(source, line, error.what());
    }
  }
}

void finish_parsed_schedule(const Schedule& schedule, const std::string& source, int header_line,
                            const std::map<int, int>& rank_lines) {
  for (int rank = 0; rank < schedule.ranks; ++rank)
    if (rank_lines.find(rank) == rank_lines.end())
      fail_at(source, header_line, "the header declares " + std::to_string(schedule.ranks) +
                                       " ranks but no line gives the actions of rank " + std::to_string(rank));
  if (auto issue = find_problem(schedule)) {
    const auto line = rank_lines.find(issue->rank);
    fail_at(source, line == rank_lines.end() ? header_line : line->second, issue->describe());
  }
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
