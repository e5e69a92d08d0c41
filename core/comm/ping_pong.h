// What one pipeline message costs between two ranks, measured by a ping-pong of a message of the given size over
// MPI point-to-point, the way the executor's transfers travel (MpiTransport: non-blocking calls finished by
// Sluice's bounded wait, under the process's wait policy), for the simulator's message latency.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace sluice::comm {

// Collective over `comm` (on a private duplicate of it, so the ping-pong never matches another message). Ranks
// `a` and `b` exchange `floats`-sized messages `repetitions` times after a warm-up; every rank returns the
// one-way times (half of each round trip, in seconds) that rank `a` measured, in order. Other ranks only take
// part in the duplicate and in sharing the times. Throws Error(kInvalidArgument) naming the argument if a == b,
// a rank is outside `comm`, or the counts are not positive; Error(kTimeout) naming the peer if it does not answer
// within comm.timeout.
std::vector<double> measure_one_way_seconds(MPI_Comm comm, int a, int b, int64_t floats, int repetitions);

}  // namespace sluice::comm
