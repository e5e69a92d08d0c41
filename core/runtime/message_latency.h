// Measures what one pipeline message costs between two ranks, to feed the simulator's latency: a ping-pong of
// an activation-sized buffer over the same MPI transport the executor uses (comm::measure_one_way_seconds,
// core/comm/ping_pong.h: the messages and their bounded waits live in core/comm).
#pragma once

#include <mpi.h>

#include <cstdint>

namespace sluice::runtime {

// Collective over `comm`. Ranks `a` and `b` exchange `floats`-sized messages `repetitions` times after a
// warm-up; every rank returns the median one-way time in seconds (half a round trip). Other ranks idle.
// Throws sluice::Error(kInvalidArgument) naming the argument if a == b, a rank is outside comm, or counts
// are not positive; Error(kTimeout) if a peer does not answer within comm.timeout.
double one_way_message_seconds(MPI_Comm comm, int a, int b, int64_t floats, int repetitions = 50);

}  // namespace sluice::runtime
