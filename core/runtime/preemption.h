// Preemption: a batch system (Slurm's `--signal=B:USR1@120`, or SIGTERM before a kill) warns a job that it is
// about to lose its nodes. The handlers below only record that a warning arrived; the train loop polls the
// record at a step boundary, where the model state is consistent, and every rank agrees before anyone stops,
// so all ranks write the same checkpoint step and exit with kPreemptedExitCode. Nothing is ever written from
// inside a signal handler (I/O and allocation are not async-signal-safe).
#pragma once

#include "core/comm/collectives.h"

namespace sluice::runtime {

// EX_TEMPFAIL from <sysexits.h>: "try again later". The sbatch templates requeue the job on this code.
constexpr int kPreemptedExitCode = 75;

// Installs handlers for SIGUSR1 and SIGTERM that set a flag and nothing else. Idempotent. Uses SA_RESTART
// so a signal landing during a blocking MPI or file call does not make that call fail with EINTR.
void install_preemption_handlers();

// True once this process received SIGUSR1 or SIGTERM (after install_preemption_handlers()).
bool preemption_requested();

// Forgets a received signal. For tests and for a host code that decides to carry on.
void clear_preemption_request();

// Collective over `world`: true on every rank when any rank was signalled. Call at a step boundary on all
// ranks; a signal usually reaches the ranks at slightly different times, and stopping on the local flag
// alone would leave some ranks waiting for messages from ranks that already left.
bool agree_to_stop(comm::Group& world);

}  // namespace sluice::runtime
