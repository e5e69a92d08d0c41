// Validation loss through the pipeline: a forward pass of the caller's samples and the config's loss, with no
// change to anything training depends on (parameters, optimizer state, the accumulation window, step counters,
// the last step's statistics). The C API's sluice_evaluate.
#pragma once

#include <cstdint>

#include "core/runtime/trainer.h"

namespace sluice::runtime {

// Collective over the trainer's world. `inputs` ([rows][input_features]) is read on the first stage's ranks,
// `targets` ([rows][output_features]) on the last stage's; other ranks may pass NULL. Returns the mean loss over
// rows x replicas samples, the same on every rank and, for a model without dropout, bit for bit the loss
// train_step reports for the same samples before it updates. Dropout is off (as in predict).
// With normalization (normalization.h) the loss is in normalized target units, as train_step's.
// Throws kState before start (and while an auto normalization has no statistics yet) and kInvalidArgument (agreed on every rank) for a bad rows or a missing array.
double evaluate(Trainer& trainer, const float* inputs, const float* targets, int64_t rows);

}  // namespace sluice::runtime
