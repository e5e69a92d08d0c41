// The forward-only variant of a lowered schedule, for inference through a training layout: the same ranks
// run the same forwards and activation messages in the same order, with every backward action dropped.
#pragma once

#include "core/schedule/schedule.h"

namespace sluice::schedule {

// Keeps F, SEND_F, RECV_F, SEND_SKIP and RECV_SKIP of every rank's list, in order. A valid lowered schedule stays valid (its
// forward messages were already matched and deadlock-free among themselves).
Schedule forward_only(const Schedule& lowered);

// As forward_only, keeping only micro-batches [0, microbatches) (1 <= microbatches <= lowered.microbatches): a
// prediction of fewer rows than pipeline.microbatches. Dropping every action of the later micro-batches keeps each
// message's send and receive together and only removes waits, so the order stays deadlock-free.
Schedule forward_only(const Schedule& lowered, int microbatches);

}  // namespace sluice::schedule
