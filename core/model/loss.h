// Losses at the end of the pipeline, computed per micro-batch but scaled for the GLOBAL batch: the returned
// gradient already carries the 1/global_batch factor, so summing the micro-batches' gradients (over all
// micro-batches and data-parallel replicas) gives exactly the full-batch mean gradient, never an average of
// averages.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/model/field_domain.h"
#include "core/model/loss_kind.h"
#include "kernels/backend.h"

namespace sluice::model {

// "mse" | "cross_entropy" (the config's `loss`); anything else throws Error(kConfig).
LossKind parse_loss(const std::string& name);

struct LossResult {
  double sum = 0.0;       // sum of this micro-batch's per-sample losses; divide the global sum by global_batch
  kernels::Tensor grad;   // dL/dy for the global mean loss L
};

// A loss the library does not have (`loss: custom`; the C API's sluice_loss_ops). Called on host memory with one
// micro-batch: `prediction` and `targets` [rows][cols]; it returns the micro-batch's loss SUM (as LossResult::sum:
// the sum over its rows of each sample's loss) and writes into `grad` [rows][cols] the gradient of the GLOBAL mean
// loss, i.e. d(sum / global_batch)/d(prediction), like the built-in losses (this code does not rescale it).
// Throws Error(kCallback) when the host's function fails.
using CustomLoss = std::function<double(const float* prediction, const float* targets, int64_t rows, int64_t cols,
                                        int64_t global_batch, float* grad)>;

// `custom` is used (and required: kConfig otherwise) when kind is kCustom. `points` is the points per channel of a
// field output (config::field_points of the model's output shape; 1 for rows). mse does not read it (the mean over
// all elements either way); cross_entropy on a field is the softmax over the channels at each point, and a sample's
// loss is the mean over its points, so the global loss is the mean over samples × points, as PyTorch's
// CrossEntropyLoss (reduction='mean') on [N, C, D..] divides by N·ΠD.
LossResult compute_loss(kernels::Backend& backend, LossKind kind, const kernels::Tensor& output,
                        const kernels::Tensor& target, int64_t global_batch, const CustomLoss* custom = nullptr,
                        int64_t points = 1);

}  // namespace sluice::model

namespace sluice::model {

// compute_loss of a field output on this rank's block of a domain-split field (core/model/field_domain.h): `output`
// and `target` are [rows][channels · Π block]; the loss op runs per canonical tile and the tiles' sums are added in
// global tile order across the domain group (a collective), so `sum` is the same double on every rank of the group
// and for every split. mse and cross_entropy (over the channels at each point) as compute_loss scales them, with the
// whole field's features and points; custom is refused (kUnsupported: the host's loss sees a whole sample).
LossResult compute_domain_loss(kernels::Backend& backend, FieldDomain& domain, LossKind kind, int64_t channels,
                               const kernels::Tensor& output, const kernels::Tensor& target, int64_t global_batch);

}  // namespace sluice::model
