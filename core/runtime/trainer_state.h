// The run state a checkpoint saves and restores, the narrow way between a Trainer and the checkpoint code
// (trainer_checkpoint.cc): Trainer::state() reads it, Trainer::restore() replaces it whole. The parameters and the
// optimizer's moments are tensors of the set-up's stage modules and optimizer (trainer_setup.h), read and written
// in place through checkpoint slots; everything else a checkpoint holds about the run is here.
#pragma once

#include <cstdint>
#include <optional>

#include "core/runtime/data_position.h"
#include "core/runtime/normalization.h"
#include "core/runtime/sample_store.h"

namespace sluice::runtime {

struct TrainerState {
  uint64_t steps_done = 0;        // optimizer steps completed (/train/step)
  int accumulation_position = 0;  // calls of the current window already done (0 at a step boundary)
  // Samples (all replicas) each call of that window passes; 0 at a step boundary or when unknown (an older file).
  int64_t accumulation_call_samples = 0;
  int64_t optimizer_steps = 0;    // the optimizer's own count (/train/optimizer_steps, the lr schedule's position)
  double learning_rate_override = 0.0;  // sluice_set_learning_rate's override; 0: follow optimizer.lr_schedule
  // The samples (all replicas) trained on so far: the next call's first global sample index (/train/data_position).
  DataPosition data_position;
  Normalization normalization;          // the statistics in use (auto ones once computed)
  // The submitted samples' new contents (restore only; state() leaves it empty: read Trainer::submitted_samples()).
  std::optional<SampleStoreContents> samples;
};

}  // namespace sluice::runtime
