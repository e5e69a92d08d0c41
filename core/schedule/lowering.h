// Adds the point-to-point communication the executor performs, turning a compute-only schedule into per-rank
// lists that cannot deadlock even with blocking (rendezvous) send/recv.
#pragma once

#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {

// For each cross-rank hand-over: SEND_F(s,m) right after F(s,m) on rank(s) and RECV_F(s+1,m) on rank(s+1);
// SEND_B(s,m) right after B/I(s,m) on rank(s) and RECV_B(s-1,m) on rank(s-1). Same-rank hand-overs (the turn
// of a V, or one rank) get no communication. Both ends of every message are placed at the same point of one
// global time-ordered serialization (a unit-cost dependency run), so any two ranks see their messages in the
// same relative order. Throws sluice::Error(kInvalidArgument) if `compute` is already lowered or cannot run.
// `compute.skips` whose stages sit on different ranks get their own messages (SEND_SKIP/RECV_SKIP forward,
// SEND_SKIP_GRAD/RECV_SKIP_GRAD backward) between those two ranks only, added last (skip_lowering.h); the
// result keeps `compute.skips`.
Schedule lower(const Schedule& compute);

// The placement for the step's real `costs`: of the rendezvous play (rendezvous_placement.h), the time-ordered
// placement (each RECV where its data arrives in the timeline timed by `costs`) and its deferred form, the first
// whose posting-order (NCCL) and blocking (rendezvous) replays (replay.h) equal the compute-only makespan, else the
// best of them (posting order within 1% first, then blocking within 1%). The compute order is `compute`'s.
Schedule lower(const Schedule& compute, const CostModel& costs);

// lower(compute, costs) with the makespans it computed to choose the placement, so that callers that report them
// need not replay the lists again (each replay at p = 512, m = 4096 costs about as much as the choice saved).
struct CostedLowering {
  Schedule lowered;
  double compute_only = 0.0;   // simulate(compute, costs).makespan
  double posting_order = 0.0;  // replay_makespan(lowered, costs, TransferMode::kPostingOrder)
  double blocking = 0.0;       // replay_makespan(lowered, costs, TransferMode::kBlocking)
  // With skips, the placement is chosen for the main chain's messages and the two replays are those of the final
  // lists, skip messages included.
};
CostedLowering lower_and_replay(const Schedule& compute, const CostModel& costs);

}  // namespace schedule
}  // namespace sluice
