// Config key checkpoint.samples: whether a checkpoint carries the submitted samples the trainer holds (the replay
// buffer, /samples). Vocabulary: every layer may include it.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::config {

enum class CheckpointSamples {
  kKeep,  // every checkpoint holds them: a resume draws exactly the batches the uninterrupted run would have drawn
  kDrop,  // checkpoints hold none (small files); a resume starts with an empty store, and says so in the log
};

// keep, drop.
inline const ChoiceTable<CheckpointSamples>& checkpoint_samples_choices() {
  static const ChoiceTable<CheckpointSamples> table = {{CheckpointSamples::kKeep, "keep"},
                                                       {CheckpointSamples::kDrop, "drop"}};
  return table;
}

}  // namespace sluice::config
