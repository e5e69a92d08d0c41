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
#include "core/model/stage_module.h"
#include "kernels/backend.h"

namespace sluice::runtime {

// "" when every value of `data` ([rows][features], host memory) is finite; else a message naming the first one:
// "non-finite value (nan) in the inputs of sample 3 (feature 1)", `what` being "inputs" or "targets". NULL is "".
std::string first_non_finite(const float* data, int64_t rows, int64_t features, const char* what);

// The step's own numeric failure on this rank, if any: a non-finite loss sum (`holds_loss`: this rank computes
// the loss of some micro-batches), else a non-finite gradient of this rank's parameters, naming the parameter
// ("non-finite gradient of layers.4.weight"). One pass over the gradients (Backend::sum_of_squares, accumulated
// in double, is finite exactly when every element is).
std::optional<Error> non_finite_in_step(const std::map<int, std::unique_ptr<model::StageModule>>& stages,
                                        kernels::Backend& backend, double loss_sum, bool holds_loss);

}  // namespace sluice::runtime
