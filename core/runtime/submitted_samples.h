// Training on samples from wherever a domain-decomposed solver has them (sluice_submit_samples and
// sluice_train_submitted): every rank submits its own samples, Sluice routes them to the ranks that need them
// (core/runtime/sample_routing.h) and keeps them in the trainer's SampleStore (core/runtime/sample_store.h, FIFO or
// replay buffer), and a training call draws the next global batch from there. The caller never needs to know which
// rank holds the first or the last pipeline stage.
//
// A batch drawn from the store is split over the data-parallel replicas replica-major, exactly as
// sluice_train_step's global batch is: replica r trains on rows [r * rows, (r + 1) * rows) of the batch's order,
// rows = batch / replicas. So a run fed the same samples in the same global order through sluice_train_step gives
// bit-identical parameters.
#pragma once

#include <cstdint>

#include "core/runtime/trainer.h"

namespace sluice::runtime {

// Collective over the trainer's world (see sample_routing.h for the order and the argument agreement): appends
// every rank's `count` samples to the store in rank-major order. In FIFO mode they wait for training; a replay
// buffer that overflows drops its oldest samples. Throws kState when the trainer is not started.
void submit_samples(Trainer& trainer, const float* inputs, const float* targets, int64_t count);

// Collective. One Trainer::train_step on the next global batch of `batch` samples from the store (0: the config's
// data.batch). Starts with the argument agreement "sluice_train_submitted arguments": kInvalidArgument for a negative
// batch or one not divisible by the data-parallel replicas (and, inside train_step, by pipeline.microbatches);
// kState when fewer than `batch` samples are held. The store changes only when the step succeeded on every rank:
// after a failure the same samples (and the same replay draw) are used by the next call.
StepResult train_submitted(Trainer& trainer, int64_t batch);

}  // namespace sluice::runtime
