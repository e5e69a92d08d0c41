#include "core/comm/request_wait.h"

#include <atomic>
#include <cstdio>

#include "core/comm/bounded_wait.h"
#include "core/comm/wait_settings.h"
#include "core/common/error.h"

namespace sluice::comm {
namespace {

std::atomic<bool> g_abandoned{false};

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

void wait_for(MPI_Request& request, const std::string& what) { wait_for(request, what, nullptr); }

void wait_for(MPI_Request& request, const std::string& what, const std::function<void()>& meanwhile) {
  if (request == MPI_REQUEST_NULL) return;
  int code = MPI_SUCCESS;
  auto complete = [&] {
    if (meanwhile) meanwhile();
    int done = 0;
    code = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    return code != MPI_SUCCESS || done != 0;
  };
  const Deadline deadline = step_deadline();
  if (!wait_until(complete, deadline, what)) {
    g_abandoned = true;
    throw Error(ErrorCode::kTimeout, what + ": no answer within " + seconds_text(deadline.seconds()) +
                                         " s (comm.timeout); the peer is stopped, hung or not in the same call");
  }
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(ErrorCode::kComm, what + " failed: " + std::string(text, static_cast<size_t>(length)));
  }
}

bool finish_or_abandon(MPI_Request& request) {
  if (request == MPI_REQUEST_NULL) return true;
  if (g_abandoned) return false;
  try {
    wait_for(request, "clean-up of an unfinished transfer");
    return true;
  } catch (...) {
    return false;
  }
}

bool communication_abandoned() { return g_abandoned; }

void note_communication_abandoned() { g_abandoned = true; }

void release_communicator(MPI_Comm& comm) {
  if (comm == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && !g_abandoned) MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

std::string world_ranks_text(MPI_Comm comm, const std::vector<int>& ranks) {
  std::vector<int> world(ranks.size(), MPI_UNDEFINED);
  MPI_Group mine = MPI_GROUP_NULL, everyone = MPI_GROUP_NULL;
  if (!ranks.empty() && MPI_Comm_group(comm, &mine) == MPI_SUCCESS &&
      MPI_Comm_group(MPI_COMM_WORLD, &everyone) == MPI_SUCCESS) {
    MPI_Group_translate_ranks(mine, static_cast<int>(ranks.size()), ranks.data(), everyone, world.data());
  }
  if (mine != MPI_GROUP_NULL) MPI_Group_free(&mine);
  if (everyone != MPI_GROUP_NULL) MPI_Group_free(&everyone);
  std::string out = ranks.size() == 1 ? "world rank " : "world ranks ";
  for (size_t i = 0; i < world.size(); ++i) {
    out += (i ? ", " : "") + (world[i] == MPI_UNDEFINED ? "?" : std::to_string(world[i]));
  }
  return out;
}

std::string peers_text(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<int> others;
  for (int r = 0; r < size; ++r) {
    if (r != rank) others.push_back(r);
  }
  return world_ranks_text(comm, others);
}

}  // namespace sluice::comm
