#include "core/schedule/schedule_kinds.h"

#include <stdexcept>

namespace sluice {
namespace schedule {

const std::vector<ScheduleKindInfo>& schedule_kinds() {
  static const std::vector<ScheduleKindInfo> kinds = {
      {ScheduleKind::kGpipe, "gpipe", ChunkRule::kExactlyOne},
      {ScheduleKind::kOneFOneB, "1f1b", ChunkRule::kExactlyOne},
      {ScheduleKind::kInterleaved, "interleaved", ChunkRule::kAtLeastTwo},
      {ScheduleKind::kZeroBubbleH1, "zb-h1", ChunkRule::kExactlyOne},
      {ScheduleKind::kZeroBubbleV, "zb-v", ChunkRule::kExactlyTwo},
  };
  return kinds;
}

const ScheduleKindInfo& schedule_kind_info(ScheduleKind kind) {
  for (const ScheduleKindInfo& info : schedule_kinds())
    if (info.kind == kind) return info;
  throw std::logic_error("schedule kind missing from schedule_kinds()");
}

std::optional<ScheduleKind> find_schedule_kind(const std::string& name) {
  for (const ScheduleKindInfo& info : schedule_kinds())
    if (name == info.name) return info.kind;
  return std::nullopt;
}

const char* schedule_kind_name(ScheduleKind kind) { return schedule_kind_info(kind).name; }

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const ScheduleKindInfo& info : schedule_kinds()) list.emplace_back(info.name);
    return list;
  }();
  return names;
}

std::string schedule_names_text() {
  std::string text;
  for (const std::string& name : schedule_names()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

bool chunks_allowed(ScheduleKind kind, int chunks) {
  switch (schedule_kind_info(kind).chunks) {
    case ChunkRule::kExactlyOne:
      return chunks == 1;
    case ChunkRule::kAtLeastTwo:
      return chunks >= 2;
    case ChunkRule::kExactlyTwo:
      return chunks == 2;
  }
  return false;
}

int default_chunks(ScheduleKind kind) { return schedule_kind_info(kind).chunks == ChunkRule::kExactlyOne ? 1 : 2; }

std::string chunks_requirement(ScheduleKind kind) {
  switch (schedule_kind_info(kind).chunks) {
    case ChunkRule::kExactlyOne:
      return "chunks = 1 (use interleaved or zb-v for several chunks)";
    case ChunkRule::kAtLeastTwo:
      return "chunks >= 2 (virtual stages per rank)";
    case ChunkRule::kExactlyTwo:
      return "chunks = 2 (two stages per rank in a V)";
  }
  return "";
}

}  // namespace schedule
}  // namespace sluice
