#include "core/runtime/wait_setup.h"

#include <algorithm>

#include "core/comm/wait_settings.h"
#include "core/common/error.h"
#include "core/runtime/node_ranks.h"

namespace sluice::runtime {

void apply_wait_settings(const config::CommSpec& spec, MPI_Comm comm) {
  const comm::WaitPolicy requested = spec.wait;
  const int ranks_here = ranks_on_this_node(comm);  // collective: every rank asks, whatever its policy
  comm::WaitSettings settings;
  settings.timeout_seconds = spec.timeout;
  settings.arrival_timeout_seconds = std::max(spec.arrival_timeout, 0.0);
  // The cores the node's ranks may use together, not this rank's own: two ranks bound to a core each do not
  // compete for a core (issue 17: counting one core per bound rank made auto block, whose sleeps answered up to
  // 1 ms late, on every message a rank waited for).
  const int cores_here = cores_of_node_ranks(comm);  // collective too
  settings.policy = comm::choose_wait_policy(requested, ranks_here, cores_here);
  comm::set_wait_settings(settings);
}

}  // namespace sluice::runtime
