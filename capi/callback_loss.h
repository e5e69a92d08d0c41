// `loss: custom` through the C API: the host's sluice_loss_ops as a model::CustomLoss (core/model/loss.h), which
// the trainer calls where it computes a built-in loss.
#pragma once

#include "capi/include/sluice/sluice.h"
#include "core/model/loss.h"

namespace sluice::capi {

// `ops` must be checked (read_sized, loss non-NULL). A non-zero return of ops.loss throws Error(kCallback).
model::CustomLoss callback_loss(const sluice_loss_ops& ops);

}  // namespace sluice::capi
