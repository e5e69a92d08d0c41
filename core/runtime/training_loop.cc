#include "core/runtime/training_loop.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "checkpoint/directory.h"
#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/common/message_text.h"
#include "core/runtime/preemption.h"
#include "core/runtime/resume_fallback.h"
#include "core/runtime/trainer_checkpoint.h"

namespace sluice::runtime {
namespace {

// Rank 0 speaks for the job; the other ranks' messages would repeat it.
void say(const Trainer& trainer, const LogFunction& log, const std::string& message) {
  if (log && trainer.layout().rank == 0) log(message);
}

}  // namespace

RunControl::RunControl(Trainer& trainer, LogFunction log, StepLimit limit)
    : trainer_(trainer), log_(std::move(log)), limit_(limit) {
  const config::CheckpointSpec& ckpt = trainer_.config().checkpoint;
  if (ckpt.every > 0 && ckpt.dir.empty()) {
    throw Error(ErrorCode::kConfig, "checkpoint.every is set but checkpoint.dir is empty");
  }
  if (ckpt.dir.empty()) return;
  // One job per directory: rank 0 locks it, and the agreement makes every rank fail with rank 0's message.
  comm::agree_or_throw(trainer_.parts().mpi->world(), "locking the checkpoint directory", comm::capture_failure([&] {
                         if (trainer_.layout().rank != 0) return;
                         directory_lock_ = std::make_unique<checkpoint::DirectoryLock>(ckpt.dir);
                       }));
  if (directory_lock_ && !directory_lock_->taken_over_from().empty()) {
    say(trainer_, log_, "sluice: took over the lock of checkpoint directory " + shorten_for_message(ckpt.dir) +
                            " from a job that is gone (" + directory_lock_->taken_over_from() + ")");
  }
}

namespace {

// Collective: rank 0 answers `question`, every rank gets its answer.
bool decided_on_rank_0(Trainer& trainer, const std::string& what, const std::function<bool()>& question) {
  bool answer = false;
  comm::agree_or_throw(trainer.parts().mpi->world(), what, comm::capture_failure([&] {
                         if (trainer.layout().rank == 0) answer = question();
                       }));
  const double mine = answer ? 1.0 : 0.0;
  return trainer.parts().mpi->world_group().all_gather(&mine, 1).front() != 0.0;
}

// Whether `dir` holds a complete checkpoint (a missing directory holds none).
bool has_checkpoint(const std::string& dir) {
  try {
    checkpoint::latest_in_dir(dir);
    return true;
  } catch (const Error&) {
    return false;  // no checkpoint yet: a fresh start, not an error
  }
}

}  // namespace

std::string RunControl::resume(const std::string& source, bool automatic) {
  std::string from = source;
  const std::string& dir = trainer_.config().checkpoint.dir;
  if (from.empty() && automatic) {
    if (dir.empty()) {
      say(trainer_, log_, "sluice: warning: automatic resume without checkpoint.dir: starting fresh, and a "
                          "preemption will not be able to save this run");
      return "";
    }
    return resume_if_any(dir);
  }
  if (from.empty()) return "";
  // A directory means its newest checkpoint that verifies (resume_fallback.h); a file is that file or an error.
  const bool is_dir = decided_on_rank_0(trainer_, "looking at the checkpoint path to resume from",
                                        [&] {
                                          std::error_code error;
                                          return std::filesystem::is_directory(from, error);
                                        });
  std::string file = from;
  if (is_dir) {
    file = load_newest_valid(trainer_, from, application_);
  } else {
    load_checkpoint(trainer_, from, application_);
  }
  say(trainer_, log_, "sluice: resumed from " + file + " at step " + std::to_string(trainer_.steps_done()));
  return file;
}

std::string RunControl::resume_if_any(const std::string& source) {
  // Rank 0 looks; the checkpoint reader then agrees on the one file it picked.
  const bool is_file = decided_on_rank_0(trainer_, "looking at the checkpoint path to resume from", [&] {
    std::error_code error;
    const std::filesystem::path path(source);
    return std::filesystem::is_regular_file(path, error) || path.extension() == ".h5";
  });
  if (!is_file && !decided_on_rank_0(trainer_, "looking for checkpoints to resume from",
                                     [&] { return has_checkpoint(source); })) {
    say(trainer_, log_, "sluice: no checkpoint in " + source + " yet, starting fresh");
    return "";
  }
  return resume(source, false);
}

std::string RunControl::save() {
  // A state already on disk is not written twice (same optimizer step and same place in the accumulation window).
  if (saved_step_ == trainer_.steps_done() && saved_position_ == trainer_.state().accumulation_position &&
      !saved_path_.empty()) {
    return saved_path_;
  }
  const config::CheckpointSpec& ckpt = trainer_.config().checkpoint;
  saved_path_ = save_checkpoint_in_dir(trainer_, ckpt.dir, ckpt.keep, application_);
  saved_step_ = trainer_.steps_done();
  saved_position_ = trainer_.state().accumulation_position;
  return saved_path_;
}

std::string RunControl::checkpoint_if_due() {
  const config::CheckpointSpec& ckpt = trainer_.config().checkpoint;
  // Periodic checkpoints fall on optimizer steps: not in the middle of an accumulation window.
  if (ckpt.every <= 0 || trainer_.state().accumulation_position != 0) return "";
  if (trainer_.steps_done() % static_cast<uint64_t>(ckpt.every) != 0 && !finished()) return "";
  const std::string path = save();
  say(trainer_, log_, "sluice: checkpoint " + path);
  return path;
}

StepEnd RunControl::stop_if_requested() {
  StepEnd end;
  if (!agree_to_stop(trainer_.parts().mpi->world_group())) return end;
  end.stop = true;
  if (trainer_.config().checkpoint.dir.empty()) {
    say(trainer_, log_, "sluice: preempted at step " + std::to_string(trainer_.steps_done()) +
                            " with no checkpoint.dir: nothing saved");
    return end;
  }
  end.checkpoint = save();  // this step's periodic checkpoint, when there is one, is not written twice
  end.stop_saved = true;
  say(trainer_, log_, "sluice: preempted: checkpoint " + end.checkpoint + " written at step " +
                          std::to_string(trainer_.steps_done()));
  return end;
}

StepEnd RunControl::end_step() {
  const std::string periodic = checkpoint_if_due();
  if (finished()) return StepEnd{periodic, false, false};
  StepEnd end = stop_if_requested();
  if (!end.stop) end.checkpoint = periodic;
  return end;
}

uint64_t RunControl::step_limit() const {
  const config::Config& cfg = trainer_.config();
  if (limit_ == StepLimit::kIfGiven && !cfg.steps_given) return 0;
  return static_cast<uint64_t>(cfg.steps);
}

bool RunControl::finished() const {
  const uint64_t limit = step_limit();
  return limit > 0 && trainer_.steps_done() >= limit;
}

RunOutcome run_training(Trainer& trainer, data::DataSource& data, RunControl& control, const RunCallbacks& callbacks) {
  const config::Layout& layout = trainer.layout();
  const int64_t rows = trainer.config().data.batch / layout.data_parallel;
  const int64_t first_row = layout.replica * rows;
  std::vector<float> inputs(static_cast<size_t>(rows * data.input_features()));
  std::vector<float> targets(static_cast<size_t>(rows * data.target_features()));
  const int64_t calls_per_step = trainer.config().optimizer.accumulate;
  while (!control.finished()) {
    // With optimizer.accumulate K, each optimizer step reads K batches of data.batch rows: batch number
    // step * K + (place in the window), so a run resumed in the middle of a window reads on where it stopped.
    const int64_t call =
        static_cast<int64_t>(trainer.steps_done()) * calls_per_step + trainer.state().accumulation_position;
    // A data file one node cannot read fails there only: agree before the step's messages start.
    comm::agree_or_throw(trainer.parts().mpi->world(), "reading batch " + std::to_string(call + 1),
                         comm::capture_failure([&] {
                           data.batch(call, first_row, rows, inputs.data(), targets.data());
                         }));
    const StepResult result = trainer.train_step(inputs.data(), targets.data(), rows);
    if (callbacks.on_step) callbacks.on_step(result);
    const StepEnd end = control.end_step();
    if (end.stop) return end.stop_saved ? RunOutcome::kStoppedWithCheckpoint : RunOutcome::kStoppedWithoutCheckpoint;
  }
  return RunOutcome::kCompleted;
}

}  // namespace sluice::runtime
