// The forward-only variant of a lowered schedule, for inference through a training layout: the same ranks
// run the same forwards and activation messages in the same order, with every backward action dropped.
#pragma once

#include "core/schedule/schedule.h"

namespace sluice::schedule {

// Keeps F, SEND_F and RECV_F of every rank's list, in order. A valid lowered schedule stays valid (its
// forward messages were already matched and deadlock-free among themselves).
Schedule forward_only(const Schedule& lowered);

}  // namespace sluice::schedule
