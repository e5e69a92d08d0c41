// Internal: replays (replay.h) one after another that share one message table. At p = 512, m = 4096 the table is
// 200 MB, and a fresh one per replay paid its page faults again each time (the lowering replays every candidate
// placement twice).
#pragma once

#include <memory>

#include "core/schedule/cost_model.h"
#include "core/schedule/replay.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

class ReplayWorkspace {
 public:
  ReplayWorkspace();
  ~ReplayWorkspace();
  ReplayWorkspace(const ReplayWorkspace&) = delete;
  ReplayWorkspace& operator=(const ReplayWorkspace&) = delete;

  // replay_makespan(lowered, costs, mode), in this workspace's table.
  double makespan(const Schedule& lowered, const CostModel& costs, TransferMode mode);

 private:
  struct Table;
  std::unique_ptr<Table> table_;
};

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
