#include "core/comm/ping_pong.h"

#include <memory>
#include <string>

#include "core/comm/duplicate_comm.h"
#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"
#include "core/common/error.h"

namespace sluice::comm {
namespace {

constexpr int kWarmup = 5;
constexpr int kPingPongTag = 0;  // the duplicate carries nothing else

void check_arguments(MPI_Comm comm, int a, int b, int64_t floats, int repetitions) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (a == b || a < 0 || b < 0 || a >= size || b >= size) {
    throw Error(ErrorCode::kInvalidArgument, "ping-pong ranks " + std::to_string(a) + " and " + std::to_string(b) +
                                                 " must be two different ranks of a " + std::to_string(size) +
                                                 "-rank communicator");
  }
  if (floats <= 0 || floats > (int64_t{1} << 30) || repetitions <= 0) {
    throw Error(ErrorCode::kInvalidArgument, "ping-pong needs 1..2^30 floats and positive repetitions, got " +
                                                 std::to_string(floats) + " floats, " +
                                                 std::to_string(repetitions) + " repetitions");
  }
}

// What the ping-pong's messages travel in: on the heap, leaked after a timeout (wait_for_keeping).
struct Buffers {
  std::vector<float> message;
  std::vector<double> one_way;  // seconds, per repetition
};

// One message of `buffers->message` to (send) or from (receive) `peer`, finished by the bounded wait.
void transfer(std::unique_ptr<Buffers>& buffers, bool send, int peer, MPI_Comm comm, const char* what) {
  float* data = buffers->message.data();
  const int count = static_cast<int>(buffers->message.size());
  MPI_Request request = MPI_REQUEST_NULL;
  if (send) {
    check_mpi(MPI_Isend(data, count, MPI_FLOAT, peer, kPingPongTag, comm, &request), "MPI_Isend (ping-pong)");
  } else {
    check_mpi(MPI_Irecv(data, count, MPI_FLOAT, peer, kPingPongTag, comm, &request), "MPI_Irecv (ping-pong)");
  }
  wait_for_keeping(request, buffers, std::string(what) + (send ? " to " : " from ") + world_ranks_text(comm, {peer}));
}

}  // namespace

std::vector<double> measure_one_way_seconds(MPI_Comm comm, int a, int b, int64_t floats, int repetitions) {
  check_arguments(comm, a, b, floats, repetitions);
  const DuplicateComm dup(comm, "ping-pong");
  int rank = 0;
  check_mpi(MPI_Comm_rank(dup.get(), &rank), "MPI_Comm_rank");
  auto buffers = std::make_unique<Buffers>(Buffers{std::vector<float>(static_cast<size_t>(floats), 1.0f),
                                                   std::vector<double>(static_cast<size_t>(repetitions), 0.0)});
  for (int r = 0; r < kWarmup + repetitions; ++r) {
    const double t0 = MPI_Wtime();
    if (rank == a) {
      transfer(buffers, true, b, dup.get(), "ping-pong: ping");
      transfer(buffers, false, b, dup.get(), "ping-pong: pong");
    } else if (rank == b) {
      transfer(buffers, false, a, dup.get(), "ping-pong: ping");
      transfer(buffers, true, a, dup.get(), "ping-pong: pong");
    }
    if (r >= kWarmup) buffers->one_way[static_cast<size_t>(r - kWarmup)] = 0.5 * (MPI_Wtime() - t0);
  }
  // Rank a timed the full round trips; share its times so every rank feeds the simulator the same number.
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(buffers->one_way.data(), repetitions, MPI_DOUBLE, a, dup.get(), &request),
            "MPI_Ibcast (ping-pong)");
  wait_for_keeping(request, buffers, "ping-pong times from " + world_ranks_text(dup.get(), {a}));
  return buffers->one_way;
}

}  // namespace sluice::comm
