// `sluice export CHECKPOINT OUT [--with-application-state]`: a model-only export of a checkpoint, the file to ship
// for inference (checkpoint/model_export.h): parameters, normalization and config, without the optimizer state
// and the submitted samples (the replay buffer) a full checkpoint carries for a resume.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::tools {

// Adds the `export` subcommand. It runs as one process (MPI is initialized as a singleton for the atomic write).
// The checkpoint is read through the checkpoint probe and every checksum verified before anything is written; a
// missing, corrupt or non-Sluice file ends in Error(kCheckpoint) naming the file and dataset, and OUT is untouched.
void register_export_command(CLI::App& app);

}  // namespace sluice::tools
