#include "core/comm/setup_agreement.h"

#include <chrono>
#include <thread>
#include <vector>

#include "core/comm/duplicate_comm.h"
#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"

namespace sluice::comm {
namespace {

constexpr int kFailureNotice = 1;

}  // namespace

bool agree_on_setup(MPI_Comm comm, const std::function<SetupState()>& poll, const std::function<void()>& abort) {
  // A private copy for the notices, so they can never match another message on the caller's one.
  const DuplicateComm notices(comm, "set-up agreement");
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(notices.get(), &rank), "MPI_Comm_rank (set-up agreement)");
  check_mpi(MPI_Comm_size(notices.get(), &size), "MPI_Comm_size (set-up agreement)");

  // 1. Poll until this rank's set-up ends, or a notice says another rank's failed.
  SetupState state = SetupState::kInProgress;
  while (true) {
    state = poll();
    if (state != SetupState::kInProgress) break;
    int arrived = 0;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, kFailureNotice, notices.get(), &arrived, MPI_STATUS_IGNORE),
              "MPI_Iprobe (set-up agreement)");
    if (arrived) {
      abort();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  // 2. A failed rank tells every other rank (they may be waiting inside their set-up for it).
  const int notice = 1;
  std::vector<MPI_Request> sent;
  if (state == SetupState::kFailed) {
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      sent.emplace_back();
      check_mpi(MPI_Isend(&notice, 1, MPI_INT, peer, kFailureNotice, notices.get(), &sent.back()),
                "MPI_Isend (set-up failure notice)");
    }
  }

  // 3. Every rank has now stopped polling: count the successes and the notices sent.
  const int mine[2] = {state == SetupState::kDone ? 1 : 0, state == SetupState::kFailed ? 1 : 0};
  int totals[2] = {0, 0};
  MPI_Request request = MPI_REQUEST_NULL;  // non-blocking + Sluice's bounded wait (request_wait.h)
  check_mpi(MPI_Iallreduce(mine, totals, 2, MPI_INT, MPI_SUM, notices.get(), &request),
            "MPI_Iallreduce (set-up agreement)");
  wait_for(request, "set-up agreement (successes and failure notices) with " + peers_text(notices.get()));

  // 4. Receive every notice addressed to this rank (probed or not), so none is left pending.
  const int expected = totals[1] - mine[1];
  for (int i = 0; i < expected; ++i) {
    int ignored = 0;
    check_mpi(MPI_Irecv(&ignored, 1, MPI_INT, MPI_ANY_SOURCE, kFailureNotice, notices.get(), &request),
              "MPI_Irecv (set-up failure notice)");
    wait_for(request, "set-up failure notice from a failed rank");
  }
  for (MPI_Request& each : sent) wait_for(each, "delivery of this rank's set-up failure notice");
  return totals[0] == size;
}

}  // namespace sluice::comm
