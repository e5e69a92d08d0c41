// Agreement on a set-up that every rank starts on its own and that only completes once all ranks have joined
// (NCCL's communicator creation): if one rank fails, the others would wait for it forever. Each rank polls its
// own set-up; a rank whose set-up fails tells the others at once, and they abort theirs instead of waiting.
// Pure MPI: the set-up itself is behind two callbacks, so the protocol is tested on the CPU.
#pragma once

#include <mpi.h>

#include <functional>

namespace sluice::comm {

enum class SetupState { kInProgress, kDone, kFailed };

// Collective over `comm`. Calls `poll` until this rank's set-up is done or failed, or until another rank reports a
// failure, in which case `abort` is called once (this rank's set-up was still in progress) and polling stops.
// Returns true on every rank if every rank's set-up is done; false on every rank otherwise (the caller then
// releases whatever its own set-up produced). `poll` must not block for long: it is called in a loop with a short
// sleep, interleaved with checks for other ranks' failure notices.
bool agree_on_setup(MPI_Comm comm, const std::function<SetupState()>& poll, const std::function<void()>& abort);

}  // namespace sluice::comm
