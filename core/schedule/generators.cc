#include "core/schedule/generators.h"

#include "core/common/error.h"
#include "core/schedule/generator_kernels.h"

namespace sluice {
namespace schedule {
namespace {

[[noreturn]] void reject(const std::string& name, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "schedule '" + name + "': " + why);
}

void require_positive(const std::string& name, const char* what, int value) {
  if (value <= 0) reject(name, std::string(what) + " must be positive, got " + std::to_string(value));
}

}  // namespace

Schedule make_schedule(const std::string& name, int ranks, int microbatches, int chunks) {
  require_positive(name, "ranks (stages)", ranks);
  require_positive(name, "microbatches", microbatches);
  require_positive(name, "chunks", chunks);
  const std::optional<ScheduleKind> kind = find_schedule_kind(name);
  if (!kind) {
    throw Error(ErrorCode::kInvalidArgument,
                "unknown schedule '" + name + "' (expected one of: " + schedule_names_text() + ")");
  }
  if (!chunks_allowed(*kind, chunks))
    reject(name, "needs " + chunks_requirement(*kind) + ", got chunks = " + std::to_string(chunks));
  switch (*kind) {
    case ScheduleKind::kGpipe:
      return detail::gpipe(ranks, microbatches);
    case ScheduleKind::kOneFOneB:
      return detail::one_f_one_b(ranks, microbatches);
    case ScheduleKind::kInterleaved:
      return detail::interleaved_one_f_one_b(ranks, microbatches, chunks);
    case ScheduleKind::kZeroBubbleH1:
      return detail::zero_bubble_h1(ranks, microbatches);
    case ScheduleKind::kZeroBubbleV:
      return detail::zero_bubble_v(ranks, microbatches);
  }
  throw Error(ErrorCode::kInternal, "schedule '" + name + "' has no generator");
}

namespace detail {

Schedule empty_schedule(const char* name, int ranks, int microbatches, int chunks, std::vector<int> placement) {
  Schedule schedule;
  schedule.name = name;
  schedule.ranks = ranks;
  schedule.chunks = chunks;
  schedule.microbatches = microbatches;
  schedule.stage_to_rank = std::move(placement);
  schedule.actions.resize(ranks);
  return schedule;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
