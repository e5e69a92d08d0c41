// Losses at the end of the pipeline, computed per micro-batch but scaled for the GLOBAL batch: the returned
// gradient already carries the 1/global_batch factor, so summing the micro-batches' gradients (over all
// micro-batches and data-parallel replicas) gives exactly the full-batch mean gradient, never an average of
// averages.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/loss_kind.h"
#include "kernels/backend.h"

namespace sluice::model {

// "mse" | "cross_entropy" (the config's `loss`); anything else throws Error(kConfig).
LossKind parse_loss(const std::string& name);

struct LossResult {
  double sum = 0.0;       // sum of this micro-batch's per-sample losses; divide the global sum by global_batch
  kernels::Tensor grad;   // dL/dy for the global mean loss L
};

LossResult compute_loss(kernels::Backend& backend, LossKind kind, const kernels::Tensor& output,
                        const kernels::Tensor& target, int64_t global_batch);

}  // namespace sluice::model
