// The schedule vocabulary, once: each built-in schedule's name and the chunks (virtual stages per rank) it runs.
// The config parser, the schedule search, `sluice plan`, the trainer and make_schedule all read this table, so a
// new schedule kind is one row here plus its generator (generators.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sluice {
namespace schedule {

enum class ScheduleKind { kGpipe, kOneFOneB, kInterleaved, kZeroBubbleH1, kZeroBubbleV };

// Which chunk counts a schedule runs.
enum class ChunkRule {
  kExactlyOne,  // one stage per rank
  kAtLeastTwo,  // several virtual stages per rank, looped
  kExactlyTwo,  // two stages per rank in a V
};

struct ScheduleKindInfo {
  ScheduleKind kind;
  const char* name;  // as the config, `sluice plan` and the IR's header spell it
  ChunkRule chunks;
};

// Every built-in schedule, in the order of schedule_names().
const std::vector<ScheduleKindInfo>& schedule_kinds();
const ScheduleKindInfo& schedule_kind_info(ScheduleKind kind);
std::optional<ScheduleKind> find_schedule_kind(const std::string& name);
const char* schedule_kind_name(ScheduleKind kind);
// The names make_schedule accepts: gpipe, 1f1b, interleaved, zb-h1, zb-v.
const std::vector<std::string>& schedule_names();
// "gpipe, 1f1b, ...": for errors that list the valid names.
std::string schedule_names_text();

bool chunks_allowed(ScheduleKind kind, int chunks);
// The chunks a schedule runs when none are given: 1, or 2 for the ones with several.
int default_chunks(ScheduleKind kind);
// What the rule asks for, e.g. "chunks = 2 (two stages per rank in a V)".
std::string chunks_requirement(ScheduleKind kind);

}  // namespace schedule
}  // namespace sluice
