// The cross-rank failure agreement: Sluice's central invariant. Every collective step runs whatever can fail
// on some ranks only to completion locally, then all ranks agree: either no rank failed and all go on, or
// every rank learns the first failing rank's error code and message and fails with it. Without this, a rank
// that threw would leave its peers waiting forever in the next message or collective.
//
// This is the only implementation; the trainer, the checkpoint reader and writer, the C API, the Fortran
// module (through sluice_join_with_error) and the command line all use it. docs/DESIGN.md describes it.
//
// Protocol (point-to-point on two reserved tags of the given communicator, so it never matches the host
// code's or the pipeline's messages): every rank sends a report {sequence, what, failure?} to rank 0; rank 0
// waits for all reports (bounded by the deadline), decides, and sends the verdict to every rank. Each call on
// a communicator gets the next sequence number, so a rank that skipped or added a collective call is named as
// out of step instead of silently pairing with the wrong call. A rank that does not report before the
// deadline is named in a TIMEOUT verdict. All waits go through comm::wait_until (no core is spun).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "core/comm/bounded_wait.h"
#include "core/comm/wait_settings.h"
#include "core/common/error.h"

namespace sluice::comm {

// Tags the agreement reserves on every communicator it runs on (MPI guarantees tags up to 32767).
constexpr int kAgreementReportTag = 32765;
constexpr int kAgreementVerdictTag = 32766;

// What rank 0 decided for every rank (agree_on_decision, rank_zero_decides.h): a few numbers and a text.
struct Decision {
  std::vector<int64_t> numbers;
  std::string text;
};

// What every rank learns from one agreement.
struct Verdict {
  uint64_t sequence = 0;       // this call's number on the communicator (1, 2, ...)
  std::optional<Error> error;  // none: every rank succeeded
  int origin = -1;             // the first failing rank, or -1 (timeouts and out-of-step verdicts: -1)
};

// Collective over `comm` (which must return MPI errors, not abort). `what` names the step being agreed on and
// must be the same text on every rank; `mine` is this rank's failure, if any. `deadline` bounds how long this
// rank waits for the others (by default comm.timeout, wait_settings.h; Deadline::none(): no bound, still
// without spinning; the agreement that opens a collective call passes arrival_deadline()). Never throws for the
// protocol's own MPI errors: they become a kComm verdict on the ranks that see them.
// The default deadline starts when the agreement starts, not where the call is written: a default argument
// `step_deadline()` may be evaluated before `capture_failure(step)` (the order is unspecified, and GCC did it),
// so a step longer than comm.timeout met a deadline already past and named the other ranks silent.
Verdict agree(MPI_Comm comm, const std::string& what, const std::optional<Error>& mine,
              const std::optional<Deadline>& deadline = std::nullopt);

// agree(), with rank 0's `decision` carried in its verdict: when every rank succeeded, every rank's `decision`
// holds rank 0's on return; otherwise it is empty on the other ranks. Same protocol and deadlines as agree() (the
// verdict only grows), so a silent or out-of-step rank is named exactly as there. rank_zero_decides.h wraps it.
Verdict agree_on_decision(MPI_Comm comm, const std::string& what, const std::optional<Error>& mine,
                          Decision& decision, const std::optional<Deadline>& deadline = std::nullopt);

// agree(), then throw on every rank if any rank failed: the failing rank rethrows its own exception (`mine`
// may hold any exception type; non-Sluice ones count as kInternal for the others), every other rank throws an
// Error with the first failing rank's code and message, naming that rank and `what`.
void agree_or_throw(MPI_Comm comm, const std::string& what, const std::exception_ptr& mine,
                    const std::optional<Deadline>& deadline = std::nullopt);
void agree_or_throw(MPI_Comm comm, const std::string& what, const std::optional<Error>& mine,
                    const std::optional<Deadline>& deadline = std::nullopt);

// The Error an exception stands for: itself for sluice::Error, kInternal with what() for others.
std::optional<Error> as_error(const std::exception_ptr& failure);

// Runs step() and returns the Error it threw, if any (see as_error), for agree().
template <typename Step>
std::optional<Error> capture_failure(Step&& step) {
  try {
    step();
  } catch (...) {
    return as_error(std::current_exception());
  }
  return std::nullopt;
}

}  // namespace sluice::comm
