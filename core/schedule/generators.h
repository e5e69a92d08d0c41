// Built-in schedule generators. They return compute-only schedules (F, B, I, W); run lower() before executing.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {

// The names make_schedule accepts: gpipe, 1f1b, interleaved, zb-h1, zb-v.
const std::vector<std::string>& schedule_names();

// `ranks` = P pipeline ranks, `microbatches` = M, `chunks` = V virtual stages per rank.
// Throws sluice::Error(kInvalidArgument) naming the violated constraint and what would satisfy it.
Schedule make_schedule(const std::string& name, int ranks, int microbatches, int chunks = 1);

}  // namespace schedule
}  // namespace sluice
