// Names and numbers that define the on-disk checkpoint format (docs/CHECKPOINT_FORMAT.md). They live in one header so
// the writer, the reader and `sluice inspect` cannot drift apart.
#pragma once

#include <cstdint>

namespace sluice::checkpoint {

// The one source of the format version (docs/CHECKPOINT_FORMAT.md, "Compatibility rule"). save() writes
// kFormatVersion; readers accept kOldestReadableFormatVersion .. kFormatVersion and refuse anything else.
// Version 2 binds every dataset's crc32 to its path, element type and shape, and stores a manifest (/manifest)
// that the file's structure is verified against; version 1 files (plain crc32, no manifest) are still read, with
// the version-1 rules. Version 3 stores parameters (and their optimizer state and accumulated gradients) in
// PyTorch's N-D shapes (a conv weight [out, in/groups, k..], a bias or norm parameter [C]) instead of 2-D
// [rows, cols], held samples of a field as [held, C, D..] and per-channel normalization statistics as [C]; the
// layout and checksums are version 2's, and readers accept a version-1 or -2 file's 2-D shapes for the same values.
constexpr int64_t kFormatVersion = 3;
constexpr int64_t kOldestReadableFormatVersion = 1;
// The first version whose files carry /manifest and bound checksums (manifest.h).
constexpr int64_t kFirstManifestFormatVersion = 2;

// Top-level groups. Every checkpoint has all four, even when one is empty, so readers can rely on them.
constexpr const char* kModelGroup = "/model";
constexpr const char* kOptimizerGroup = "/optimizer";
constexpr const char* kAccumulationGroup = "/accumulation";
constexpr const char* kTrainGroup = "/train";
// The host application's registered arrays (sluice_register_state): /application/<name> (replicated) or
// /application/<name>/rank_<r> (per world rank). Written by every save since application state existed; readers
// do not require it (older files lack it, and older readers ignore it).
constexpr const char* kApplicationGroup = "/application";
// Samples submitted through sluice_submit_samples that the trainer still holds (the replay buffer, or the samples
// not trained on yet): /samples/inputs [held, input_features] and /samples/targets [held, output_features], float32,
// oldest first. Written by every save since submitted samples existed (empty when none are held, under config
// checkpoint.samples: drop, and in a model-only export); readers do not require it, and older readers ignore it.
constexpr const char* kSamplesGroup = "/samples";
constexpr const char* kSamplesInputsDataset = "inputs";
constexpr const char* kSamplesTargetsDataset = "targets";
// Per-feature normalization statistics (config `normalization`, core/runtime/normalization.h):
// /normalization/inputs_mean and inputs_std [input_features], /normalization/targets_mean and targets_std
// [output_features], float32, for each side that is normalized (written by world rank 0). Readers do not require
// them: a side without its datasets (every file written before normalization existed) is not normalized.
constexpr const char* kNormalizationGroup = "/normalization";
constexpr const char* kNormalizationInputsMean = "inputs_mean";
constexpr const char* kNormalizationInputsStd = "inputs_std";
constexpr const char* kNormalizationTargetsMean = "targets_mean";
constexpr const char* kNormalizationTargetsStd = "targets_std";

// Datasets of /train (Snapshot::train_ints, /train/<name>; build the path with train_path()). A load requires
// step and optimizer_steps.
constexpr const char* kStepDataset = "step";
constexpr const char* kSeedDataset = "seed";
// The samples (all replicas) trained on so far: the next call's first global sample index, which keys dropout
// (core/runtime/data_position.h). Files without data_position_in_samples = 1 (written before calls could differ in
// size) store the step count here instead; a load then derives the sample count from the next call's batch.
constexpr const char* kDataPositionDataset = "data_position";
constexpr const char* kDataPositionInSamplesDataset = "data_position_in_samples";
constexpr const char* kOptimizerStepsDataset = "optimizer_steps";
// Gradient accumulation (optimizer.accumulate): train_step calls of the current window already added to the saved
// partial sums (0 at a step boundary), and the data-parallel replica count whose sums /accumulation holds.
constexpr const char* kAccumulationPositionDataset = "accumulation_position";
constexpr const char* kAccumulationReplicasDataset = "accumulation_replicas";
// The samples (all replicas) each call of that window passed: the rest of the window must pass the same batch.
// Written in the middle of a window only; absent (older files, or at a step boundary): the next call takes any.
constexpr const char* kAccumulationCallSamplesDataset = "accumulation_call_samples";
// Submitted samples (/samples): how many are held, and how many batches were drawn from a replay buffer (the
// counter of its seeded permutations). Absent in older files: 0.
constexpr const char* kSamplesHeldDataset = "samples_held";
constexpr const char* kSamplesDrawsDataset = "samples_draws";
// sluice_set_learning_rate's override: the IEEE-754 bits of the double (0 = none: follow optimizer.lr_schedule,
// whose position is optimizer_steps). Bits, not a rounded decimal, so a restart continues with the same lr.
// Absent in older files: 0.
constexpr const char* kLrOverrideBitsDataset = "lr_override_bits";

// Root attributes. format_version is written by save() itself; the others come from the caller's Snapshot.
constexpr const char* kFormatVersionAttribute = "format_version";
constexpr const char* kConfigAttribute = "config";
constexpr const char* kCreatedByAttribute = "created_by";
constexpr const char* kOptimizerAttribute = "optimizer";  // optimizer.type at save time
// A model-only export (`sluice export`, sluice_trainer_export; checkpoint/model_export.h) carries the root attribute
// export = "model": its /optimizer, /accumulation and /samples groups are empty, so it can be loaded for inference
// but not resumed. A plain string attribute listed in the manifest like the others, so readers that predate it
// read the file as an ordinary version-3 checkpoint.
constexpr const char* kExportAttribute = "export";
constexpr const char* kModelExportValue = "model";

// Per-dataset attribute holding a CRC-32 (as zlib.crc32 computes it). Version 1: of the dataset's bytes as stored
// (little-endian, row-major). Version 2: of the dataset's manifest line "path|type|dims" followed by those bytes
// (manifest.h, bound_crc32), so a dataset moved to another path or rewritten with another type or shape fails.
constexpr const char* kChecksumAttribute = "crc32";

// Version 2: the root dataset listing every other dataset of the file, one "path|type|dims" line each (manifest.h).
// A scalar fixed-length string; its crc32 attribute covers kManifestChecksumHeader followed by the text.
constexpr const char* kManifestDataset = "/manifest";
constexpr const char* kManifestChecksumHeader = "/manifest|text|";

}  // namespace sluice::checkpoint
