// The submitted samples a trainer holds (SampleStore) inside its checkpoints: /samples/inputs and /samples/targets,
// oldest first, plus /train/samples_held and /train/samples_draws (docs/CHECKPOINT_FORMAT.md). A resumed run then
// draws exactly the batches the uninterrupted run would have drawn.
//
// Replica 0's first-stage rank writes the inputs and its last-stage rank the targets (the replicas hold identical
// stores); on load every rank that keeps a side reads it (on a pipeline.domain split only its block of it), so the
// pipeline layout, replica count and split may change.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/reader.h"
#include "checkpoint/snapshot.h"
#include "core/config/checkpoint_samples.h"
#include "core/config/domain_layout.h"
#include "core/runtime/sample_store.h"

namespace sluice::runtime {

// On a pipeline.domain split: where this rank's block of each held sample lies in the stored whole samples, per
// side at that side's resolution (the output's box is the input's scaled, data::output_block_box).
struct HeldSampleBlock {
  std::vector<int64_t> input_shape;   // the WHOLE sample at the model's input, [C, D..]
  std::vector<int64_t> output_shape;  // ... and at its output
  config::DomainBox input_box;        // this rank's block of the input field (spatial offsets and extents)
  config::DomainBox output_box;       // ... of the output field
};

// This rank's share of the store as checkpoint entries and /train values (the values are the same on every rank).
// `input_shape` and `output_shape` are one sample's shape as this rank holds it (config/sample_shape.h): a field
// side is stored as [held, C, D..] (format_version 3), a side of rows (or of an unknown shape) as [held, features].
// With `choice` drop (config checkpoint.samples) the entries record none held and no sample dataset is written.
// With a pipeline.domain split (`block` given) the store holds this rank's block of each sample, and the shapes are
// the block's: each side is a block entry (checkpoint::Entry::global_dims) of the whole [held, C, D..] dataset, its
// box [0:held, 0:C, that side's box], so the file holds the whole samples exactly as the undecomposed run writes them.
void add_sample_entries(const SampleStore& store, int replica, checkpoint::Snapshot& snapshot,
                        const std::vector<int64_t>& input_shape = {}, const std::vector<int64_t>& output_shape = {},
                        config::CheckpointSamples choice = config::CheckpointSamples::kKeep,
                        const HeldSampleBlock* block = nullptr);

// What a load will put into the store, read and checked but not applied yet (Trainer::restore applies it).
using StagedSamples = SampleStoreContents;

// Reads this rank's side of the stored samples. Files without /train/samples_held hold none. Throws
// Error(kCheckpoint) naming the file and dataset when a dataset is missing or has another shape, or when the file
// holds more samples than the configured replay buffer can (data.replay.capacity).
// A side may be stored as [held, features] (versions 1 and 2, and rows) or [held, C, D..] (a field, version 3).
// On a pipeline.domain split (`block` given, more than one block) the store holds blocks: each kept side is read as
// the ONE hyperslab [held, all C, this rank's box] of the stored whole samples [held, C, D..] (Reader::read_box_into),
// so no rank holds a whole sample, and the file may come from any split or none. A box read cannot check the
// dataset's crc32 (it covers the whole dataset): the load's collective verify_all, before staging, streams every
// dataset once on one rank and every rank agrees on the result, so a flipped byte outside this rank's block fails the
// load on every rank too. A side stored as [held, features] (an older file) is refused on a split (kUnsupported: load
// it undecomposed and save it again); any other shape than [held, C, D..] is kCheckpoint naming the dataset.
StagedSamples stage_samples(const checkpoint::Reader& reader, const SampleStore& store,
                            const std::vector<int64_t>& input_shape = {},
                            const std::vector<int64_t>& output_shape = {}, const HeldSampleBlock* block = nullptr);

// After a load under checkpoint.samples drop that restored no samples: world rank 0 says in the log that the run
// resumes with an empty sample store, and why (the checkpoints of this run do not carry them).
void log_dropped_samples(config::CheckpointSamples choice, const StagedSamples& staged, const std::string& file,
                         int world_rank);

}  // namespace sluice::runtime
