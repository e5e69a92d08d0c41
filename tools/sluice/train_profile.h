// `sluice train --profile FILE`: after training, the last step's measured per-action costs (F / I / W busy time of
// every rank, core/runtime/measured_costs.h) and the one-way time of one activation message between the first two
// stages (core/runtime/message_latency.h), written by rank 0 as a cost profile (core/schedule/cost_profile.h) that
// `sluice plan --costs FILE` and `pipeline.costs: FILE` read. To tell the per-action fixed cost from the cost per
// row, the same layout and schedule is then measured once more at another micro-batch size (about 1/8 the rows,
// runtime::second_microbatch_count) in a trainer of its own fed step 0's batch, and the profile records the fit
// cost = a + b x rows through the two sizes (runtime::fit_cost_profile). With one row per replica there is no
// other size: the profile then has fixed terms 0.
#pragma once

#include <mpi.h>

#include <string>

#include "core/data/data_source.h"
#include "core/runtime/trainer.h"

namespace sluice::tools {

// Collective over `world`, after training; `source` gives the second size's batch. A failure (an unwritable path) is
// agreed, so every rank throws it.
void write_cost_profile(MPI_Comm world, const runtime::Trainer& trainer, data::DataSource& source,
                        const std::string& path);

}  // namespace sluice::tools
