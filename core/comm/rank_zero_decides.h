// "Rank 0 decides": a choice every rank must make identically (pipeline.schedule auto, the rank order) is made
// once, on rank 0, and reaches every rank inside the failure agreement's verdict (agreement.h). So the choice
// is bounded like every other wait of Sluice's (comm.timeout), a rank that never arrives is named in a TIMEOUT
// on every live rank, a rank in another collective call is named out of step, and a failure of rank 0's
// decision reaches every rank instead of leaving them waiting for a broadcast that never comes.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

#include "core/comm/agreement.h"

namespace sluice::comm {

// Collective over `comm` (which must return MPI errors). Rank 0 runs `decide` (other ranks never call it) and
// every rank returns its Decision. `what` names the choice and must be the same text on every rank. If `decide`
// throws, rank 0 rethrows its exception and every other rank throws an Error with its code and message, naming
// rank 0 and `what`; a timeout or out-of-step call throws Error(kTimeout / kState) naming the rank(s) at fault.
Decision rank_zero_decides(MPI_Comm comm, const std::string& what, const std::function<Decision()>& decide);

}  // namespace sluice::comm
