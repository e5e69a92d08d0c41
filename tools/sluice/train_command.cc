#include "tools/sluice/train_command.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/config/layout.h"
#include "core/data/make_data_source.h"
#include "checkpoint/directory.h"
#include "core/runtime/placement.h"
#include "core/runtime/preemption.h"
#include "core/runtime/trainer.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tools/sluice/command_exit.h"
#include "tools/sluice/train_report.h"

namespace sluice::tools {
namespace {

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
  bool json = false;
  std::string trace;
  std::string resume;
  bool auto_resume = false;
};

// Human-readable progress: stdout normally; stderr under --json, so stdout holds only JSON objects.
std::ostream& log_stream(const TrainOptions& options) { return options.json ? std::cerr : std::cout; }

// Where to resume from: --resume names a file or directory (which must hold a checkpoint); --auto-resume
// takes checkpoint.dir's latest if there is one (a requeued Slurm job finds its own checkpoints this way).
std::string resume_source(const TrainOptions& options, const config::Config& cfg, int rank) {
  if (!options.resume.empty()) return options.resume;
  if (!options.auto_resume) return "";
  if (cfg.checkpoint.dir.empty()) {
    if (rank == 0) {
      std::cerr << "sluice: warning: --auto-resume without checkpoint.dir: starting fresh, and a preemption will "
                   "not be able to save this run"
                << std::endl;
    }
    return "";
  }
  try {
    return checkpoint::latest_in_dir(cfg.checkpoint.dir);
  } catch (const Error&) {
    if (rank == 0) {
      log_stream(options) << "sluice: no checkpoint in " << cfg.checkpoint.dir << " yet, starting fresh" << std::endl;
    }
    return "";
  }
}

// Errors every rank detects identically (config, layout): reported once, clean exit 1 everywhere.
// Anything after that may hit one rank only, and its peers could be blocked in a message: the command
// line tool (never the library) then aborts the job so that no rank hangs.
[[noreturn]] void fail_everywhere(const std::exception& e, int rank, bool identical_on_all_ranks) {
  if (identical_on_all_ranks) {
    if (rank == 0) std::cerr << "sluice train: " << e.what() << std::endl;
    MPI_Finalize();
    throw CommandExit{1};
  }
  // One write: a peer's MPI_Abort may kill this rank at any moment, and a line printed piecewise was seen cut
  // off before the reason (a cuda stage's "no CUDA device" lost behind "rank 1: ").
  std::cerr << "sluice train: rank " + std::to_string(rank) + ": " + e.what() + "\n" << std::flush;
  // Errors agreed across ranks (Trainer::start) reach every rank here at once, each with its own message: a
  // moment's grace lets the peers print theirs before the first abort kills them.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  MPI_Abort(MPI_COMM_WORLD, 1);
  throw CommandExit{1};
}

void run_training(const TrainOptions& options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);

  // Signals only set a flag; the step loop acts on it at a step boundary. Installed first, so a warning that
  // arrives during start-up is not fatal (the default action of SIGUSR1 is to terminate).
  runtime::install_preemption_handlers();

  config::Config cfg;
  config::Layout layout{};
  std::unique_ptr<data::DataSource> source;
  try {
    cfg = config::parse_config(options.config, options.overrides);
    layout = config::make_layout(cfg, world, rank);
    if (cfg.data.type == "external") {
      throw Error(ErrorCode::kConfig, "data.type external is for the C API; sluice train needs synthetic or hdf5");
    }
    source = data::make_data_source(cfg);
    if (cfg.checkpoint.every > 0 && cfg.checkpoint.dir.empty()) {
      throw Error(ErrorCode::kConfig, "checkpoint.every is set but checkpoint.dir is empty");
    }
  } catch (const Error& e) {
    fail_everywhere(e, rank, true);
  }

  runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
  try {
    trainer.start();
  } catch (const Error& e) {
    // Shapes, partition and schedule are checked identically on every rank before any message.
    fail_everywhere(e, rank, e.code() == ErrorCode::kConfig || e.code() == ErrorCode::kInvalidArgument);
  }
  try {
    const std::string layout_text = trainer.layout_description();
    if (rank == 0) log_stream(options) << layout_text << std::flush;
    if (rank == 0 && std::getenv("SLURM_RESTART_COUNT") != nullptr) {
      log_stream(options) << "sluice: SLURM_RESTART_COUNT=" << std::getenv("SLURM_RESTART_COUNT") << std::endl;
    }
    const std::string resume = resume_source(options, cfg, rank);
    if (!resume.empty()) {
      runtime::load_checkpoint(trainer, resume);
      if (rank == 0) {
        log_stream(options) << "sluice: resumed from " << checkpoint::resolve_checkpoint_path(resume) << " at step "
                  << trainer.steps_done() << std::endl;
      }
    }
    trainer.set_tracing(!options.trace.empty());

    const int64_t global_batch = cfg.data.batch;
    const int64_t rows = global_batch / layout.data_parallel;
    const int64_t first_row = layout.replica * rows;
    std::vector<float> inputs(rows * source->input_features());
    std::vector<float> targets(rows * source->target_features());
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t step = trainer.steps_done(); step < static_cast<uint64_t>(cfg.steps); ++step) {
      source->batch(static_cast<int64_t>(step), first_row, rows, inputs.data(), targets.data());
      const runtime::StepResult r = trainer.train_step(inputs.data(), targets.data(), rows);
      if (rank == 0) std::cout << (options.json ? step_json(r, global_batch) : step_line(r, global_batch)) << std::endl;
      const bool last = trainer.steps_done() == static_cast<uint64_t>(cfg.steps);
      if (cfg.checkpoint.every > 0 && (trainer.steps_done() % cfg.checkpoint.every == 0 || last)) {
        const std::string path = runtime::save_checkpoint_in_dir(trainer, cfg.checkpoint.dir, cfg.checkpoint.keep);
        if (rank == 0) log_stream(options) << "sluice: checkpoint " << path << std::endl;
      }
      if (!last && runtime::agree_to_stop(trainer.mpi().world_group())) {
        // 75 means "a checkpoint is on disk, requeue me"; with nothing saved a requeue would start over.
        if (cfg.checkpoint.dir.empty()) {
          if (rank == 0) {
            std::cerr << "sluice: preempted at step " << trainer.steps_done()
                      << " with no checkpoint.dir: nothing saved, exiting with 1" << std::endl;
          }
          MPI_Finalize();
          throw CommandExit{1};
        }
        const std::string path = runtime::save_checkpoint_in_dir(trainer, cfg.checkpoint.dir, cfg.checkpoint.keep);
        if (rank == 0) {
          log_stream(options) << "sluice: preempted: checkpoint " << path << " written at step "
                              << trainer.steps_done() << ", exiting with " << runtime::kPreemptedExitCode << std::endl;
        }
        MPI_Finalize();
        throw CommandExit{runtime::kPreemptedExitCode};
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const runtime::PipelineStats stats = trainer.gather_stats();
    if (!options.trace.empty()) trainer.write_trace(options.trace);
    if (rank == 0) {
      std::cout << (options.json ? summary_json(stats, trainer.steps_done(), seconds, trainer.last_loss())
                                 : summary_line(stats, trainer.steps_done(), seconds))
                << std::endl;
    }
  } catch (const CommandExit&) {
    throw;
  } catch (const std::exception& e) {
    fail_everywhere(e, rank, false);
  }
  MPI_Finalize();
}

}  // namespace

void register_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a pipelined model (run under mpirun or srun)");
  cmd->add_option("config", options->config, "YAML config file")->required();
  cmd->add_option("--set", options->overrides, "Override a config key: key.path=value (repeatable)");
  cmd->add_flag("--json", options->json, "One JSON object per step and a final summary object");
  cmd->add_option("--trace", options->trace, "Write the last step's measured timeline (Chrome trace JSON)");
  cmd->add_option("--resume", options->resume, "Resume from a checkpoint file, or a directory's latest");
  cmd->add_flag("--auto-resume", options->auto_resume,
                "Resume from checkpoint.dir's latest checkpoint if there is one, else start fresh");
  cmd->callback([options] { run_training(*options); });
}

}  // namespace sluice::tools
