#include "core/runtime/message_latency.h"

#include <string>
#include <vector>

#include "core/runtime/measured_costs.h"
#include "core/comm/mpi_context.h"
#include "core/common/error.h"

namespace sluice::runtime {

double one_way_message_seconds(MPI_Comm comm, int a, int b, int64_t floats, int repetitions) {
  int size = 0, rank = 0;
  comm::check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  comm::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
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
  std::vector<float> buffer(static_cast<size_t>(floats), 1.0f);
  const int count = static_cast<int>(floats);
  constexpr int kWarmup = 5;
  std::vector<double> one_way;
  for (int r = 0; r < kWarmup + repetitions; ++r) {
    const double t0 = MPI_Wtime();
    if (rank == a) {
      comm::check_mpi(MPI_Send(buffer.data(), count, MPI_FLOAT, b, 0, comm), "MPI_Send (ping)");
      comm::check_mpi(MPI_Recv(buffer.data(), count, MPI_FLOAT, b, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv (pong)");
    } else if (rank == b) {
      comm::check_mpi(MPI_Recv(buffer.data(), count, MPI_FLOAT, a, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv (ping)");
      comm::check_mpi(MPI_Send(buffer.data(), count, MPI_FLOAT, a, 0, comm), "MPI_Send (pong)");
    }
    if (r >= kWarmup) one_way.push_back(0.5 * (MPI_Wtime() - t0));
  }
  // Rank a timed the full round trip; share its answer so every rank feeds the simulator the same number.
  double result = rank == a ? median(one_way, "ping-pong times") : 0.0;
  comm::check_mpi(MPI_Bcast(&result, 1, MPI_DOUBLE, a, comm), "MPI_Bcast (latency)");
  return result;
}

}  // namespace sluice::runtime
