#include "core/runtime/message_latency.h"

#include <vector>

#include "core/comm/ping_pong.h"
#include "core/runtime/measured_costs.h"

namespace sluice::runtime {

double one_way_message_seconds(MPI_Comm comm, int a, int b, int64_t floats, int repetitions) {
  // Every rank gets rank a's times, so every rank feeds the simulator the same median.
  return median(comm::measure_one_way_seconds(comm, a, b, floats, repetitions), "ping-pong times");
}

}  // namespace sluice::runtime
