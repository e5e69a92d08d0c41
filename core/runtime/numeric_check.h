// Non-finite values (NaN, Inf) in a training step. Left alone, one NaN sample poisons every parameter through the
// optimizer step and the run trains garbage from then on; so the trainer looks at what a step could be poisoned by
// (the data it was given, the loss, the gradients about to be applied) and fails the step with kNumeric instead,
// through the same agreement as any failed step, so that no rank applies an update.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/common/error.h"
#include "core/common/non_finite.h"
#include "core/model/stage_module.h"
#include "kernels/backend.h"

namespace sluice::runtime {

// The step's data is checked with first_non_finite (core/common/non_finite.h), `what` "inputs" or "targets".
using sluice::first_non_finite;

// The step's own numeric failure on this rank, if any: a non-finite loss sum (`holds_loss`: this rank computes
// the loss of some micro-batches), else a non-finite gradient of this rank's parameters, naming the parameter
// ("non-finite gradient of layers.4.weight"). One pass over the gradients (Backend::sum_of_squares, accumulated
// in double, is finite exactly when every element is).
// The loss is also refused when its mean over this replica's `rows` samples does not fit in a float: the C API
// reports the loss as a float, and a loss that overflows there would read as inf with status OK ("loss (mean over
// 4 samples 1.2e+40) overflows a float"). The call's mean averages the replicas' means, so it fits when each does.
std::optional<Error> non_finite_in_step(const std::map<int, std::unique_ptr<model::StageModule>>& stages,
                                        kernels::Backend& backend, double loss_sum, bool holds_loss, int64_t rows);

}  // namespace sluice::runtime
