// Checkpoint files in a directory: naming by step, finding the latest complete one, and keeping only the last K.
// Only complete checkpoints carry the plain name ckpt_<step>.h5: save() writes <name>.tmp-<writer id> and renames
// it atomically when every rank has finished, so a killed save can never shadow the previous checkpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sluice::checkpoint {

// "ckpt_00000010.h5" (at least 8 digits; larger steps simply get more).
std::string checkpoint_file_name(int64_t step);

// The step of a complete checkpoint's file name (no directory), nullopt for anything else.
std::optional<int64_t> step_of_checkpoint_name(const std::string& file_name);

// "<final_path>.tmp-<writer_id>", the name a save writes to before its atomic rename.
std::string temporary_path(const std::string& final_path, const std::string& writer_id);

// The step of an unfinished save's file name ckpt_<step>.h5.tmp-<id>, nullopt for anything else.
std::optional<int64_t> step_of_temporary_name(const std::string& file_name);

// What `path` is when it exists and is not a regular file ("a FIFO", "a directory", "a character device", ...),
// "" when it is a regular file or does not exist. Uses stat(2) only: it never opens the path, so a FIFO cannot
// block the caller. Checkpoint code refuses to read such a path, or to replace it with a save.
std::string non_regular_kind(const std::string& path);

// Path of the complete checkpoint with the highest step in dir. Error(kCheckpoint) naming dir if there is none.
std::string latest_in_dir(const std::string& dir);

// "A directory means its latest checkpoint": dir -> latest_in_dir(dir); anything else is returned unchanged.
std::string resolve_checkpoint_path(const std::string& file_or_dir);

// The writer id save() puts into its temporary names: SLURM_JOB_ID, else the calling process's pid (save() uses
// rank 0's, broadcast).
std::string this_writer_id();

// Deletes all but the `keep` highest-step complete checkpoints in dir, plus this writer's stale temporaries: those
// named .tmp-<writer_id> whose step is not newer than the newest complete checkpoint (a running save always
// targets a newer step). Another writer's temporaries are never touched: they may belong to a job that is still
// writing; except with an empty `writer_id`, which the holder of the directory's lock (directory_lock.h) passes:
// no other job can be writing there, so every stale temporary is a dead one (a killed save of an earlier run).
// Not collective: call it from one rank after save() returned. keep < 1 is Error(kInvalidArgument).
void rotate(const std::string& dir, int keep, const std::string& writer_id);

}  // namespace sluice::checkpoint
