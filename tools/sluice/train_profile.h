// `sluice train --profile FILE`: after training, the last step's measured per-action costs (F / I / W busy time of
// every rank, core/runtime/measured_costs.h) and the one-way time of one activation message between the first two
// stages (core/runtime/message_latency.h), written by rank 0 as a cost profile (core/schedule/cost_profile.h) that
// `sluice plan --costs FILE` and `pipeline.costs: FILE` read.
#pragma once

#include <mpi.h>

#include <string>

#include "core/runtime/trainer.h"

namespace sluice::tools {

// Collective over `world`; a failure (an unwritable path) is agreed, so every rank throws it.
void write_cost_profile(MPI_Comm world, const runtime::Trainer& trainer, const std::string& path);

}  // namespace sluice::tools
