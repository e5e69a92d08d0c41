// Normalization statistics in a checkpoint (/normalization/inputs_mean, inputs_std, targets_mean, targets_std;
// docs/CHECKPOINT_FORMAT.md): written with every save of a trainer that normalizes, read back by a load (resume)
// and by the inference-only model. Optional on read: a side without its datasets is not normalized by the file.
#pragma once

#include <cstdint>

#include "checkpoint/reader.h"
#include "checkpoint/snapshot.h"
#include "core/runtime/normalization.h"

namespace sluice::runtime {

// World rank 0 adds the active sides' statistics (every rank holds the same); other ranks add nothing.
void add_normalization_entries(const Normalization& normalization, int world_rank, checkpoint::Snapshot& snapshot);

struct SavedNormalization {
  FeatureScaling inputs;   // empty when the file has no input statistics
  FeatureScaling targets;  // empty when the file has no target statistics
};

// The file's statistics, checksum-verified. Error(kCheckpoint) naming file and dataset when a side has only one
// of its two datasets, a length differs from the model's features (or, for a field side of `*_points` > 1 points
// per channel, from its channels: per-channel statistics), or a std is not finite and > 0.
SavedNormalization read_normalization(const checkpoint::Reader& reader, int64_t input_features,
                                      int64_t output_features, int64_t input_points = 1, int64_t output_points = 1);

}  // namespace sluice::runtime
