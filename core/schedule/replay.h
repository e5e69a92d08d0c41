// Replays a lowered schedule with the communication rules of a transport, so that where the lowering put each
// SEND/RECV shows up in the makespan. simulate() only follows data dependencies (a message arrives when its
// producer ends plus the transfer time); real transports add rules of their own:
//   - posting order (NCCL): a rank's communication operations complete in the order they were posted, so a
//     RECV posted too early holds back every later SEND of that rank until its data has arrived;
//   - blocking (rendezvous MPI): a SEND or RECV stops its rank until the matching end is reached too.
// Skip messages (SEND_SKIP and the rest, action.h) are replayed like the chain's: the reader's F waits for its
// skips, the producer's backward for their gradients, and each costs one transfer.
#pragma once

#include <string>

#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {

enum class TransferMode {
  kComputeOnly,   // data dependencies only (simulate()); SEND/RECV placement is ignored
  kPostingOrder,  // posts never block; each rank's SEND/RECVs complete in list order (NCCL)
  kBlocking,      // a SEND/RECV blocks its rank until the pair is matched and transferred
};

// "compute_only", "posting_order", "blocking"; parse throws Error(kInvalidArgument) naming the valid ones.
const char* transfer_mode_name(TransferMode mode);
TransferMode parse_transfer_mode(const std::string& text);

// The step's makespan when `lowered` runs under `mode` with `costs` (kComputeOnly: simulate(lowered).makespan).
// A message completes transfer_time(costs) after the later of its two posts (and, in posting order, after
// both ranks' earlier messages completed). Throws Error(kInvalidArgument) if `lowered` is not lowered or
// deadlocks under `mode`.
double replay_makespan(const Schedule& lowered, const CostModel& costs, TransferMode mode);

}  // namespace schedule
}  // namespace sluice
