// Every wait of Sluice's on an MPI request goes through here: MPI_Test polled by comm::wait_until (the process's
// wait policy, never MPI_Wait, which Open MPI implements as a busy poll of a whole core), bounded by comm.timeout.
// A wait that times out throws Error(kTimeout) naming what it waited for and from which world rank(s); the
// caller's failure then goes through the agreement like any other, whose own deadline lets every live rank
// return even when the silent one never comes back.
//
// After a TIMEOUT some requests are left pending (a collective cannot be cancelled, a send cannot be reliably):
// the process notes it (communication_abandoned()), later clean-up gives those requests up instead of waiting
// again, and their buffers are leaked rather than freed under MPI. The trainer is then unusable: destroy it and
// end the process (the C API's header says so).
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::comm {

// Waits for `request` (MPI_REQUEST_NULL returns at once). `what` says what this rank waited for, with the
// peer: "receive of activation for micro-batch 3 from world rank 2". Throws Error(kComm) for an MPI error,
// Error(kTimeout) after comm.timeout seconds (the request stays pending; communication_abandoned() turns true).
void wait_for(MPI_Request& request, const std::string& what);
// The same wait, calling `meanwhile` (which must not block) before every poll: for a rank that others wait on
// while it waits itself, and must keep telling them it is alive (the checkpoint writer's progress messages).
void wait_for(MPI_Request& request, const std::string& what, const std::function<void()>& meanwhile);

// wait_for, for a request whose buffer lives in `buffer`: when the wait times out, MPI may still write into (or
// read from) the buffer once the silent peer wakes up, so the buffer is leaked rather than freed, then the
// timeout is rethrown. For requests whose buffers would otherwise die with the caller's scope.
template <typename Buffer>
void wait_for_keeping(MPI_Request& request, std::unique_ptr<Buffer>& buffer, const std::string& what) {
  try {
    wait_for(request, what);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kTimeout) static_cast<void>(buffer.release());
    throw;
  }
}

// For destructors and error paths: finishes `request` within comm.timeout unless a timeout was already seen
// in this process (then gives up at once). Returns whether the request completed; never throws.
bool finish_or_abandon(MPI_Request& request);

// Whether some wait of this process has timed out (its requests may still be pending inside MPI).
bool communication_abandoned();

// Notes a timeout seen outside wait_for (the failure agreement's own deadline, a TIMEOUT verdict from rank 0):
// from then on communication_abandoned() is true.
void note_communication_abandoned();

// Frees a communicator Sluice created (MPI_Comm_dup/split), unless MPI is finalized or some exchange of this
// process was abandoned. Why the second: a silent peer that wakes up later still delivers the messages of the
// abandoned exchange, and MPICH gives a freed communicator's context id to the next one at once, so those
// messages would match a new trainer's receives ("rank 1 in call #7" in the next trainer's agreement). Such a
// communicator is leaked instead (one handle per communicator alive at the timeout). Sets `comm` to
// MPI_COMM_NULL either way; never throws.
void release_communicator(MPI_Comm& comm);

// "world rank 2" / "world ranks 0, 1, 3": ranks of `comm` as ranks of MPI_COMM_WORLD, for messages.
std::string world_ranks_text(MPI_Comm comm, const std::vector<int>& ranks);
// Every rank of `comm` but the caller, as world_ranks_text: the peers a collective waits for.
std::string peers_text(MPI_Comm comm);

}  // namespace sluice::comm
