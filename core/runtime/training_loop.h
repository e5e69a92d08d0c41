// The one training loop. What keeps a long job alive lives here, in the library, so that `sluice train` and a
// simulation code that calls the C API from its own time loop get the same behaviour:
//   - resume: from a given checkpoint file or directory, or automatically from checkpoint.dir's latest;
//   - after every optimizer step: a checkpoint every checkpoint.every steps (and at the run's last step),
//     rotated to the newest checkpoint.keep;
//   - preemption: a SIGUSR1/SIGTERM recorded by core/runtime/preemption is agreed at a step boundary, a
//     checkpoint is written, and the run ends as "stopped" (the command line exits 75, which the sbatch
//     templates turn into a requeue).
// Every operation here is collective over the trainer's world and fails on every rank together (comm::agree).
// The loop's own messages go to the caller's log function (the command line prints them; the C API passes its
// sluice_set_log sink, whose default writes warnings to stderr: core/common/log.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "checkpoint/directory_lock.h"
#include "core/data/data_source.h"
#include "core/runtime/application_state.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

using LogFunction = std::function<void(const std::string& message)>;

// What the end of a step decided.
struct StepEnd {
  std::string checkpoint;      // the periodic or preemption checkpoint written after this step, or ""
  bool stop = false;           // a preemption signal was agreed: the caller should end the run now
  bool stop_saved = false;     // with stop: a checkpoint of this step is on disk (else no checkpoint.dir)
};

// Where a run's last step comes from.
enum class StepLimit {
  kConfigSteps,  // config `steps` (1 when the key is absent): `sluice train`, which owns the loop
  kIfGiven,      // config `steps` only when the config has the key, else none: the C API, whose caller owns the loop
};

// Per-step work around Trainer::train_step, driven by the config's checkpoint and steps keys.
class RunControl {
 public:
  // Collective when checkpoint.dir is set: rank 0 takes the directory's lock (checkpoint/directory_lock.h) for
  // this RunControl's lifetime, and every rank fails together (kCheckpoint naming the holder) when another job
  // holds it.
  RunControl(Trainer& trainer, LogFunction log, StepLimit limit = StepLimit::kConfigSteps);

  // Collective. Loads `source` (a file or directory) if non-empty; else, with `automatic`, checkpoint.dir's
  // latest checkpoint if there is one (a requeued job finds its own checkpoints this way). A directory's newest
  // checkpoint that fails verification is skipped with a warning on rank 0's stderr, and the next older one is
  // tried (resume_fallback.h); only when none verifies is it an error. Returns the file loaded, or "" when
  // starting fresh.
  std::string resume(const std::string& source, bool automatic);

  // Collective. Like resume(source, false), but a directory without checkpoints (or one that does not exist yet)
  // is a fresh start ("") instead of an error. `source` names a file when it is an existing regular file or
  // ends in ".h5" (a missing file is an error); anything else is a directory. Decided on rank 0.
  std::string resume_if_any(const std::string& source);

  // Collective; call after every train_step: checkpoint_if_due(), then (unless finished()) stop_if_requested().
  StepEnd end_step();

  // Collective. The periodic checkpoint: written when checkpoint.every divides the step count or the run just
  // reached its last step. Returns the path written, or "".
  std::string checkpoint_if_due();

  // Collective; call at a step boundary. Agrees whether any rank received a preemption signal; if so, writes a
  // checkpoint of the current step to checkpoint.dir (unless this step's is already on disk) and returns stop.
  // Every rank returns the same answer.
  StepEnd stop_if_requested();

  // True once the trainer has done its last step (see StepLimit; never with kIfGiven and no `steps` key).
  bool finished() const;

  // The last step, or 0 when there is none (StepLimit::kIfGiven without a `steps` key).
  uint64_t step_limit() const;

  // The host's registered arrays (the C API's sluice_register_state), written into every checkpoint this RunControl
  // saves and restored by every resume. Borrowed; null (the default) means none.
  void set_application_state(const ApplicationState* application) { application_ = application; }

 private:
  std::string save();

  Trainer& trainer_;
  LogFunction log_;
  StepLimit limit_;
  int saved_position_ = 0;     // the accumulation-window position of that checkpoint
  uint64_t saved_step_ = 0;    // the step of the checkpoint this RunControl wrote last (with saved_path_)
  std::string saved_path_;
  const ApplicationState* application_ = nullptr;
  std::unique_ptr<checkpoint::DirectoryLock> directory_lock_;  // rank 0 only, while checkpoint.dir is set
};

// How a run of run_training ended.
enum class RunOutcome { kCompleted, kStoppedWithCheckpoint, kStoppedWithoutCheckpoint };

struct RunCallbacks {
  LogFunction log;                                      // progress and checkpoint messages (rank 0 only)
  std::function<void(const StepResult&)> on_step;       // after every step, on every rank
};

// Collective. Trains from the trainer's current step to config `steps` on batches from `data` (this replica's
// rows of each step's global batch), with RunControl after each step.
RunOutcome run_training(Trainer& trainer, data::DataSource& data, RunControl& control, const RunCallbacks& callbacks);

}  // namespace sluice::runtime
