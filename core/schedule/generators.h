// Built-in schedule generators. They return compute-only schedules (F, B, I, W); run lower() before executing.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/schedule.h"
#include "core/schedule/schedule_kinds.h"

namespace sluice {
namespace schedule {

// `name` is one of schedule_names() (schedule_kinds.h). `ranks` = P pipeline ranks, `microbatches` = M, `chunks` = V virtual stages per rank.
// Throws sluice::Error(kInvalidArgument) naming the violated constraint and what would satisfy it.
Schedule make_schedule(const std::string& name, int ranks, int microbatches, int chunks = 1);

}  // namespace schedule
}  // namespace sluice
