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

void require_one_chunk(const std::string& name, int chunks) {
  if (chunks != 1)
    reject(name, "supports exactly 1 chunk per rank, got chunks = " + std::to_string(chunks) +
                     " (use 'interleaved' or 'zb-v' for several chunks)");
}

}  // namespace

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names = {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v"};
  return names;
}

Schedule make_schedule(const std::string& name, int ranks, int microbatches, int chunks) {
  require_positive(name, "ranks (stages)", ranks);
  require_positive(name, "microbatches", microbatches);
  require_positive(name, "chunks", chunks);
  if (name == "gpipe") {
    require_one_chunk(name, chunks);
    return detail::gpipe(ranks, microbatches);
  }
  if (name == "1f1b") {
    require_one_chunk(name, chunks);
    return detail::one_f_one_b(ranks, microbatches);
  }
  if (name == "interleaved") {
    if (chunks < 2)
      reject(name, "needs chunks >= 2 virtual stages per rank, got " + std::to_string(chunks) +
                       " (use '1f1b' for one chunk)");
    return detail::interleaved_one_f_one_b(ranks, microbatches, chunks);
  }
  if (name == "zb-h1") {
    require_one_chunk(name, chunks);
    return detail::zero_bubble_h1(ranks, microbatches);
  }
  if (name == "zb-v") {
    if (chunks != 2)
      reject(name, "needs exactly chunks = 2 (two stages per rank in a V), got " + std::to_string(chunks));
    return detail::zero_bubble_v(ranks, microbatches);
  }
  std::string known;
  for (const auto& candidate : schedule_names()) known += (known.empty() ? "" : ", ") + candidate;
  throw Error(ErrorCode::kInvalidArgument, "unknown schedule '" + name + "' (expected one of: " + known + ")");
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
