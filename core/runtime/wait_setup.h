// Installs a config's `comm` section as the process's wait settings (core/comm/wait_settings.h), resolving
// comm.wait: auto from how many ranks share this node and how many cores they may use together.
#pragma once

#include <mpi.h>

#include "core/comm/wait_policy.h"
#include "core/config/config.h"

namespace sluice::runtime {

// Collective over `comm` (it counts the node's ranks). comm.arrival_timeout < 0 (not given) means no bound.
void apply_wait_settings(const config::CommSpec& spec, MPI_Comm comm);

}  // namespace sluice::runtime
