// Model-only exports: the file a user ships to run inference (docs/CHECKPOINT_FORMAT.md, "Model-only exports").
// A full checkpoint carries what a bit-identical resume needs, the optimizer state and the submitted samples
// (the replay buffer) included, which can be thousands of times the model's size. An export keeps the model's
// parameters (/model), the normalization statistics (/normalization), the root attributes (config, layout, ...)
// and /train; /optimizer, /accumulation and /samples are present but empty (held samples 0), /application is empty
// unless asked for, and the root attribute export = "model" (format.h) marks it. Same format_version: every reader
// of version-3 files reads it; the inference model loads it and predicts exactly as from the full checkpoint.
// A trainer refuses to resume from one (refuse_resume_from_export): it holds no optimizer state to continue with.
#pragma once

#include <string>

#include "checkpoint/reader.h"
#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

struct ExportOptions {
  // Keep the host application's registered arrays (/application); off, they are left out.
  bool with_application_state = false;
};

// Turns what a trainer would save (every rank's share, or one process's whole file) into the export's content, in
// place: drops the optimizer, accumulation and sample entries (and application arrays unless asked), records no
// held samples and a step boundary, and sets the export attribute.
void strip_to_model(Snapshot& snapshot, const ExportOptions& options);

// True when the file was written as a model-only export.
bool is_model_export(const Reader& reader);

// Error(kCheckpoint) naming the file when it is a model-only export: a resume needs the optimizer state (and the
// submitted samples) that an export leaves out.
void refuse_resume_from_export(const Reader& reader);

// Single process (`sluice export`; MPI must be initialized): reads `source` (a file, or a directory meaning its
// latest checkpoint) through the checkpoint probe (isolated_read.h, auto), verifies every checksum, and writes the
// export to `out` atomically (save()). Errors: kInvalidArgument when out names the source file; kCheckpoint naming
// the file and dataset for a missing, unreadable or corrupt source; kCheckpoint/kIo when out cannot be written.
// Returns the source file read.
std::string export_model_file(const std::string& source, const std::string& out, const ExportOptions& options);

}  // namespace sluice::checkpoint
