// The CSV schedule format (see schedule_io.h): spreadsheet-friendly, one row per rank.
#include <map>
#include <sstream>

#include "core/common/error.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/schedule_io_parsing.h"

namespace sluice {
namespace schedule {

using detail::fail_at;

namespace {
constexpr const char* kMetadataHeader = "schedule,ranks,chunks,microbatches,stage_to_rank";
constexpr const char* kRanksHeader = "rank,actions";
}  // namespace

std::string to_csv(const Schedule& schedule) {
  std::ostringstream out;
  out << kMetadataHeader << "\n" << schedule.name << ',' << schedule.ranks << ',' << schedule.chunks << ','
      << schedule.microbatches << ',';
  for (size_t s = 0; s < schedule.stage_to_rank.size(); ++s) out << (s ? " " : "") << schedule.stage_to_rank[s];
  out << "\n";
  if (!schedule.skips.empty()) {
    out << "skips";
    for (const SkipEdge& skip : schedule.skips) out << ',' << to_string(skip);
    out << "\n";
  }
  out << kRanksHeader << "\n";
  for (int rank = 0; rank < schedule.ranks; ++rank) {
    out << rank;
    for (const Action& action : schedule.actions[rank]) out << ',' << to_string(action);
    out << "\n";
  }
  return out.str();
}

Schedule parse_csv(const std::string& content, const std::string& source) {
  std::istringstream in(content);
  std::vector<std::string> lines;
  for (std::string text; std::getline(in, text);) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    lines.push_back(text);
  }
  if (lines.size() < 3 || lines[0] != kMetadataHeader)
    fail_at(source, 1, std::string("expected the header row '") + kMetadataHeader + "'");
  const auto meta = detail::split(lines[1], ',');
  if (meta.size() != 5) fail_at(source, 2, "expected 5 cells: name, ranks, chunks, microbatches, stage_to_rank");
  Schedule schedule;
  schedule.name = meta[0];
  schedule.ranks = detail::parse_count(meta[1], "ranks", source, 2);
  schedule.chunks = detail::parse_count(meta[2], "chunks", source, 2);
  schedule.microbatches = detail::parse_count(meta[3], "microbatches", source, 2);
  if (schedule.ranks == 0 || schedule.chunks == 0 || schedule.microbatches == 0)
    fail_at(source, 2, "ranks, chunks and microbatches must all be positive");
  for (const auto& cell : detail::split(meta[4], ' '))
    schedule.stage_to_rank.push_back(detail::parse_count(cell, "stage_to_rank entry", source, 2));
  size_t ranks_row = 2;
  if (lines[2].rfind("skips", 0) == 0) {  // optional: skips,<from>><to>,...
    detail::parse_skips(detail::split(lines[2], ','), 1, schedule, source, 3);
    ++ranks_row;
  }
  if (ranks_row >= lines.size() || lines[ranks_row] != kRanksHeader)
    fail_at(source, static_cast<int>(ranks_row) + 1, std::string("expected the row '") + kRanksHeader + "'");
  schedule.actions.resize(schedule.ranks);
  std::map<int, int> rank_lines;
  for (size_t index = ranks_row + 1; index < lines.size(); ++index) {
    const int line = static_cast<int>(index) + 1;
    if (lines[index].empty()) continue;
    const auto cells = detail::split(lines[index], ',');
    const int rank = detail::parse_count(cells[0], "rank", source, line);
    if (rank >= schedule.ranks)
      fail_at(source, line, "rank " + std::to_string(rank) + " is outside 0.." + std::to_string(schedule.ranks - 1));
    if (!rank_lines.emplace(rank, line).second)
      fail_at(source, line, "rank " + std::to_string(rank) + " already listed on line " + std::to_string(rank_lines[rank]));
    for (size_t i = 1; i < cells.size(); ++i) {
      try {
        schedule.actions[rank].push_back(parse_action(cells[i]));
      } catch (const Error& error) {
        fail_at(source, line, error.what());
      }
    }
  }
  detail::finish_parsed_schedule(schedule, source, 2, rank_lines);
  return schedule;
}

}  // namespace schedule
}  // namespace sluice
