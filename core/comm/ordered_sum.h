// The data-parallel gradient sum: bit-reproducible (added in rank order, like a sequential run) yet with the
// traffic of a reduce-scatter + all-gather (~2 x the buffer per rank) rather than an all-gather of every
// replica's full buffer. See ordered_sum.cc for the two-phase protocol and why phase 2s start in a queue.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "core/comm/transport.h"

namespace sluice::comm {

// Per-group state shared by all sums in flight: a private duplicate of the group's communicator and the queue
// that starts every sum's second phase in the same order on every rank. Collective to create.
class OrderedSumChannel;
std::shared_ptr<OrderedSumChannel> make_ordered_sum_channel(MPI_Comm group_comm);

// Starts a sum of `count` floats at `data` over the channel's group; when the request completes, `data` holds
// sum over ranks 0..size-1 added in that order. Calling test() may start a sum's second phase; do it only
// when no further sum will be started on this channel before the wait, or ranks may start collectives in
// different orders (the trainer therefore only wait()s). Exchanges are split so every MPI count fits an int (and at most
// `max_floats_per_exchange` floats, for tests).
std::unique_ptr<Request> start_ordered_sum_request(std::shared_ptr<OrderedSumChannel> channel, int rank, int size,
                                                   float* data, int64_t count, int64_t max_floats_per_exchange);

}  // namespace sluice::comm
