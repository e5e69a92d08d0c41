// Saving a Trainer's state into a checkpoint and loading it back, possibly under another pipeline or
// data-parallel layout. The file is keyed by global layer index (checkpoint/layer_paths.h), so each rank
// writes the layers it owns and reads the layers it owns now.
//
// What is saved: parameters (/model), optimizer state (/optimizer: momentum or Adam moments per parameter),
// normalization statistics (/normalization, normalization_checkpoint.h; a load restores them, the file's winning
// over the config's),
// and /train: step, seed, data_position (the samples trained on so far, data_position.h) with
// data_position_in_samples, optimizer_steps,
// accumulation_position and accumulation_replicas. /accumulation is empty at a step boundary; saved in the middle
// of an accumulation window (optimizer.accumulate > 1, TrainerState::accumulation_position > 0) it holds every
// replica's partial gradient sums (/accumulation/layer_NNNN/<param>/replica_R, written by that replica's ranks),
// and a load continues the window: the same accumulate is required (kCheckpoint otherwise); under another replica
// count the saved replicas' sums are added in replica order and continued by replica 0 (accumulation_restore.h).
#pragma once

#include <functional>
#include <string>

#include "checkpoint/snapshot.h"
#include "core/runtime/application_state.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

// `application` (may be null: none) is the host's registered arrays (application_state.h): every save writes them
// under /application, every load restores them together with the trainer's state. Its registration is checked
// across ranks first (kInvalidArgument naming the rank that differs).

// Collective over the trainer's world. Atomic: `path` is either the previous file or the complete new one.
// `edit` (may be empty) changes this rank's share before it is written (a model-only export, trainer_export.h);
// `caller` is the API call that errors and the ranks' agreement name.
void save_checkpoint(Trainer& trainer, const std::string& path, const ApplicationState* application = nullptr,
                     const std::function<void(checkpoint::Snapshot&)>& edit = {},
                     const char* caller = "sluice_save_checkpoint");

// Collective. `path` is a file or a directory (its latest checkpoint). Every checksum is verified and every
// shape checked before any state is overwritten; on error (kCheckpoint, naming file and dataset or application
// array) the trainer and the application arrays are unchanged on every rank. Before this process opens the file,
// rank 0 has the checkpoint probe read it in a separate process (checkpoint.isolated_reads,
// checkpoint/isolated_read.h): a file that crashes libhdf5 is kCheckpoint "FILE: the HDF5 library crashed ...".
// A model-only export (checkpoint/model_export.h) is refused (kCheckpoint naming it as one): it has no optimizer
// state to continue with.
// `verified`: the caller has just probed and run checkpoint::verify_all on this file (resume_fallback.h), so
// neither is repeated.
void load_checkpoint(Trainer& trainer, const std::string& path, const ApplicationState* application = nullptr,
                     bool verified = false);

// Writes `<dir>/ckpt_<step>.h5` for the trainer's current step and keeps the newest `keep` (collective).
// Returns the path written.
std::string save_checkpoint_in_dir(Trainer& trainer, const std::string& dir, int keep,
                                   const ApplicationState* application = nullptr);

}  // namespace sluice::runtime
