// How the data-parallel replicas sum their gradients (config pipeline.gradient_sum), decided from the
// pipeline transport every rank agreed on. Pure, so the rules are unit-tested; the trainer builds the reducer.
#pragma once

#include <string>

#include "core/config/gradient_sum_kind.h"

namespace sluice::runtime {

// kOrdered or kNccl (never kAuto) for `requested` (auto | ordered | nccl), given the pipeline transport this job resolved to
// (the same on every rank: "mpi", "staged", "nccl", or "mixed: ..." when ranks differ):
//   ordered -> always (host memory + MPI in rank order: the sequential run's bits, any device).
//   nccl    -> only when the transport is nccl: every rank on its own GPU with NCCL built in, which is what an
//              NCCL communicator over the replicas needs too. Refused otherwise with Error(kConfig) naming
//              pipeline.gradient_sum, the transport and what to use instead.
//   auto    -> nccl when the transport is nccl, else ordered. On GPUs with NCCL the sum stays on the device and
//              overlaps compute; the order of its additions is then NCCL's, which the GPU path's tolerance
//              (not bitwise equality) already allows. Ask for ordered to keep the sequential run's bits.
config::GradientSumKind choose_gradient_sum(config::GradientSumKind requested, const std::string& transport_summary);

}  // namespace sluice::runtime
