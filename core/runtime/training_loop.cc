#include "core/runtime/training_loop.h"

#include <vector>

#include "checkpoint/directory.h"
#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/runtime/preemption.h"
#include "core/runtime/trainer_checkpoint.h"

namespace sluice::runtime {
namespace {

// Rank 0 speaks for the job; the other ranks' messages would repeat it.
void say(const Trainer& trainer, const LogFunction& log, const std::string& message) {
  if (log && trainer.layout().rank == 0) log(message);
}

}  // namespace

RunControl::RunControl(Trainer& trainer, LogFunction log) : trainer_(trainer), log_(std::move(log)) {
  const config::CheckpointSpec& ckpt = trainer_.config().checkpoint;
  if (ckpt.every > 0 && ckpt.dir.empty()) {
    throw Error(ErrorCode::kConfig, "checkpoint.every is set but checkpoint.dir is empty");
  }
}

std::string RunControl::resume(const std::string& source, bool automatic) {
  std::string from = source;
  const std::string& dir = trainer_.config().checkpoint.dir;
  if (from.empty() && automatic) {
    if (dir.empty()) {
      say(trainer_, log_, "sluice: warning: automatic resume without checkpoint.dir: starting fresh, and a "
                          "preemption will not be able to save this run");
      return "";
    }
    // Rank 0 looks; the checkpoint reader then agrees on the one file it picked.
    std::string latest;
    comm::agree_or_throw(trainer_.mpi().world(), "looking for checkpoints to resume from", comm::capture_failure([&] {
                           if (trainer_.layout().rank != 0) return;
                           try {
                             latest = checkpoint::latest_in_dir(dir);
                           } catch (const Error&) {
                             latest.clear();  // no checkpoint yet: a fresh start, not an error
                           }
                         }));
    const double found = latest.empty() ? 0.0 : 1.0;
    if (trainer_.mpi().world_group().all_gather(&found, 1).front() == 0.0) {
      say(trainer_, log_, "sluice: no checkpoint in " + dir + " yet, starting fresh");
      return "";
    }
    from = dir;
  }
  if (from.empty()) return "";
  load_checkpoint(trainer_, from);
  const std::string file = checkpoint::resolve_checkpoint_path(from);
  say(trainer_, log_, "sluice: resumed from " + file + " at step " + std::to_string(trainer_.steps_done()));
  return file;
}

std::string RunControl::save() {
  const config::CheckpointSpec& ckpt = trainer_.config().checkpoint;
  return save_checkpoint_in_dir(trainer_, ckpt.dir, ckpt.keep);
}

StepEnd RunControl::end_step() {
  const config::CheckpointSpec& ckpt = trainer_.config().checkpoint;
  StepEnd end;
  if (ckpt.every > 0 && (trainer_.steps_done() % static_cast<uint64_t>(ckpt.every) == 0 || finished())) {
    end.checkpoint = save();
    say(trainer_, log_, "sluice: checkpoint " + end.checkpoint);
  }
  if (finished() || !agree_to_stop(trainer_.mpi().world_group())) return end;
  end.stop = true;
  if (ckpt.dir.empty()) {
    say(trainer_, log_, "sluice: preempted at step " + std::to_string(trainer_.steps_done()) +
                            " with no checkpoint.dir: nothing saved");
    return end;
  }
  if (end.checkpoint.empty()) end.checkpoint = save();
  end.stop_saved = true;
  say(trainer_, log_, "sluice: preempted: checkpoint " + end.checkpoint + " written at step " +
                          std::to_string(trainer_.steps_done()));
  return end;
}

bool RunControl::finished() const {
  return trainer_.steps_done() >= static_cast<uint64_t>(trainer_.config().steps);
}

RunOutcome run_training(Trainer& trainer, data::DataSource& data, RunControl& control, const RunCallbacks& callbacks) {
  const config::Layout& layout = trainer.layout();
  const int64_t rows = trainer.config().data.batch / layout.data_parallel;
  const int64_t first_row = layout.replica * rows;
  std::vector<float> inputs(static_cast<size_t>(rows * data.input_features()));
  std::vector<float> targets(static_cast<size_t>(rows * data.target_features()));
  while (!control.finished()) {
    const auto step = static_cast<int64_t>(trainer.steps_done());
    // A data file one node cannot read fails there only: agree before the step's messages start.
    comm::agree_or_throw(trainer.mpi().world(), "reading the batch of step " + std::to_string(step + 1),
                         comm::capture_failure([&] { data.batch(step, first_row, rows, inputs.data(), targets.data()); }));
    const StepResult result = trainer.train_step(inputs.data(), targets.data(), rows);
    if (callbacks.on_step) callbacks.on_step(result);
    const StepEnd end = control.end_step();
    if (end.stop) return end.stop_saved ? RunOutcome::kStoppedWithCheckpoint : RunOutcome::kStoppedWithoutCheckpoint;
  }
  return RunOutcome::kCompleted;
}

}  // namespace sluice::runtime
