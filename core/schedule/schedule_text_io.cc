// The plain-text schedule format (see schedule_io.h).
#include <map>
#include <sstream>

#include "core/common/error.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/schedule_io_parsing.h"

namespace sluice {
namespace schedule {

using detail::fail_at;

std::string to_text(const Schedule& schedule) {
  std::ostringstream out;
  out << "# sluice schedule: one line per rank, actions <stage><KIND><microbatch> in execution order\n";
  out << "schedule " << schedule.name << " ranks " << schedule.ranks << " chunks " << schedule.chunks
      << " microbatches " << schedule.microbatches << "\n";
  out << "stage_to_rank";
  for (int rank : schedule.stage_to_rank) out << ' ' << rank;
  out << "\n";
  if (!schedule.skips.empty()) {
    out << "skips";
    for (const SkipEdge& skip : schedule.skips) out << ' ' << to_string(skip);
    out << "\n";
  }
  for (int rank = 0; rank < schedule.ranks; ++rank) {
    out << "rank " << rank << ":";
    for (const Action& action : schedule.actions[rank]) out << ' ' << to_string(action);
    out << "\n";
  }
  return out.str();
}

namespace {

void parse_header(const std::vector<std::string>& words, Schedule& schedule, const std::string& source, int line) {
  // words: schedule NAME ranks P chunks V microbatches M
  if (words.size() != 8 || words[2] != "ranks" || words[4] != "chunks" || words[6] != "microbatches")
    fail_at(source, line, "expected the header 'schedule <name> ranks <P> chunks <V> microbatches <M>'");
  schedule.name = words[1];
  schedule.ranks = detail::parse_count(words[3], "ranks", source, line);
  schedule.chunks = detail::parse_count(words[5], "chunks", source, line);
  schedule.microbatches = detail::parse_count(words[7], "microbatches", source, line);
  if (schedule.ranks == 0 || schedule.chunks == 0 || schedule.microbatches == 0)
    fail_at(source, line, "ranks, chunks and microbatches must all be positive");
  schedule.actions.resize(schedule.ranks);
  schedule.stage_to_rank = looped_placement(schedule.ranks, schedule.chunks);
}

}  // namespace

Schedule parse_text(const std::string& content, const std::string& source) {
  Schedule schedule;
  int header_line = 0;
  std::map<int, int> rank_lines;
  std::istringstream in(content);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    const auto words = detail::split(text, ' ');
    if (words.empty() || words[0][0] == '#') continue;
    if (header_line == 0) {
      if (words[0] != "schedule") fail_at(source, line, "the first line must be the 'schedule ...' header");
      parse_header(words, schedule, source, line);
      header_line = line;
    } else if (words[0] == "stage_to_rank") {
      if (words.size() - 1 != static_cast<size_t>(schedule.num_stages()))
        fail_at(source, line, "stage_to_rank lists " + std::to_string(words.size() - 1) +
                                  " ranks, expected one per stage (" + std::to_string(schedule.num_stages()) + ")");
      for (size_t s = 1; s < words.size(); ++s)
        schedule.stage_to_rank[s - 1] = detail::parse_count(words[s], "stage_to_rank entry", source, line);
    } else if (words[0] == "skips") {
      detail::parse_skips(words, 1, schedule, source, line);
    } else if (words[0] == "rank") {
      if (words.size() < 2 || words[1].empty() || words[1].back() != ':')
        fail_at(source, line, "expected 'rank <r>: <actions...>'");
      const int rank = detail::parse_count(words[1].substr(0, words[1].size() - 1), "rank", source, line);
      if (rank >= schedule.ranks)
        fail_at(source, line, "rank " + std::to_string(rank) + " is outside 0.." + std::to_string(schedule.ranks - 1));
      if (!rank_lines.emplace(rank, line).second)
        fail_at(source, line, "rank " + std::to_string(rank) + " already listed on line " +
                                  std::to_string(rank_lines[rank]));
      for (size_t i = 2; i < words.size(); ++i) {
        try {
          schedule.actions[rank].push_back(parse_action(words[i]));
        } catch (const Error& error) {
          fail_at(source, line, error.what());
        }
      }
    } else {
      fail_at(source, line, "unknown line starting with '" + words[0] + "' (expected 'stage_to_rank', 'skips' or 'rank')");
    }
  }
  if (header_line == 0) fail_at(source, 1, "missing the 'schedule <name> ranks <P> chunks <V> microbatches <M>' header");
  detail::finish_parsed_schedule(schedule, source, header_line, rank_lines);
  return schedule;
}

}  // namespace schedule
}  // namespace sluice
