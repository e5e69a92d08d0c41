// The process's settings for Sluice's own waits (config section `comm`): how long a wait for another rank may
// last before it is a TIMEOUT, and how the core is used meanwhile. Process-wide because every transport,
// collective and agreement waits through them and none should need a settings object threaded to it; the
// trainer installs its config's settings when it starts (runtime::apply_wait_settings), so with several
// trainers in one process the last one started decides.
//
// Two bounds, because they protect against different things:
//  - the step timeout (comm.timeout) counts from when every rank is inside a collective call: a peer that does
//    not answer by then is stopped, hung or dead. Every send, receive, collective and agreement inside a call
//    uses it. Before any trainer has started (start-up) it is kStartupTimeoutSeconds.
//  - the arrival timeout (comm.arrival_timeout) bounds the wait at a call's entry agreement for a rank whose
//    solver has not reached the call yet. Under the C API the solver's step may take any time, so it is off by
//    default there; `sluice train` (no solver of its own) uses the step timeout.
#pragma once

#include "core/comm/bounded_wait.h"
#include "core/comm/wait_policy.h"

namespace sluice::comm {

constexpr double kStartupTimeoutSeconds = 300.0;

struct WaitSettings {
  double timeout_seconds = kStartupTimeoutSeconds;  // <= 0: no bound
  double arrival_timeout_seconds = 0.0;             // <= 0: no bound
  WaitPolicy policy = WaitPolicy::kBlock;           // resolved (never kAuto)
};

WaitSettings wait_settings();
// Installs `settings`; a kAuto policy is stored as kBlock (resolve it first with choose_wait_policy).
void set_wait_settings(const WaitSettings& settings);

// A deadline comm.timeout from now: for every wait inside a call.
Deadline step_deadline();
// A deadline comm.arrival_timeout from now: for the agreement that opens a collective call.
Deadline arrival_deadline();

}  // namespace sluice::comm
