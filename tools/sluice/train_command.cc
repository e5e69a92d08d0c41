#include "tools/sluice/train_command.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
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

// Errors every rank has reached together (the config and layout checks, which every rank makes identically, and
// Trainer::start, which agrees on failure across ranks): nobody is blocked in a message, so the job ends cleanly.
// Rank 0 gathers every rank's message and prints each distinct one once with the ranks that reported it, e.g.
//   sluice train: rank 1: no CUDA device: ...
//   sluice train: ranks 0, 2, 3: sluice_trainer_start failed on another rank (rank 1, ...)
// or just `sluice train: <message>` when all ranks agree on it.
[[noreturn]] void fail_agreed(const std::exception& e, int rank, int world) {
  constexpr int kLine = 1024;
  std::vector<char> mine(kLine, '\0');
  std::string text = e.what();
  text.copy(mine.data(), kLine - 1);
  std::vector<char> all(rank == 0 ? static_cast<size_t>(kLine) * world : 0);
  MPI_Gather(mine.data(), kLine, MPI_CHAR, all.data(), kLine, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::vector<std::pair<std::string, std::vector<int>>> distinct;  // message -> ranks, in rank order
    for (int r = 0; r < world; ++r) {
      const std::string message(all.data() + static_cast<size_t>(r) * kLine);
      auto it = std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) { return d.first == message; });
      if (it == distinct.end()) it = distinct.insert(distinct.end(), {message, {}});
      it->second.push_back(r);
    }
    for (const auto& [message, ranks] : distinct) {
      std::string who;
      if (distinct.size() > 1) {
        who = ranks.size() == 1 ? "rank " : "ranks ";
        for (size_t i = 0; i < ranks.size(); ++i) who += (i ? ", " : "") + std::to_string(ranks[i]);
        who += ": ";
      }
      std::cerr << "sluice train: " << who << message << std::endl;
    }
  }
  MPI_Finalize();
  throw CommandExit{1};
}

// Anything after start-up may hit one rank only, and its peers could be blocked in a message: the command line
// tool (never the library) then aborts the job so that no rank hangs.
[[noreturn]] void fail_and_abort(const std::exception& e, int rank) {
  // One write: a peer's MPI_Abort may kill this rank at any moment.
  std::cerr << "sluice train: rank " + std::to_string(rank) + ": " + e.what() + "\n" << std::flush;
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
  std::unique_ptr<Error> setup_error;
  try {
    cfg = config::parse_config(options.config, options.overrides);
    layout = config::make_layout(cfg, world, rank);
    if (cfg.data.type == config::DataType::kExternal) {
      throw Error(ErrorCode::kConfig, "data.type external is for the C API; sluice train needs synthetic or hdf5");
    }
    source = data::make_data_source(cfg);
    if (cfg.checkpoint.every > 0 && cfg.checkpoint.dir.empty()) {
      throw Error(ErrorCode::kConfig, "checkpoint.every is set but checkpoint.dir is empty");
    }
  } catch (const Error& e) {
    setup_error = std::make_unique<Error>(e);
  }
  // Usually every rank fails here alike, but a data file one node cannot read fails there only: agree first.
  int failed_here = setup_error ? 1 : 0, failed_anywhere = 0;
  MPI_Allreduce(&failed_here, &failed_anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed_anywhere) {
    fail_agreed(setup_error ? *setup_error : Error(ErrorCode::kConfig, "the set-up failed on another rank"), rank,
                world);
  }

  runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
  try {
    trainer.start();
  } catch (const Error& e) {
    // Trainer::start either starts on every rank or throws on every rank (core/runtime/agreement.h).
    fail_agreed(e, rank, world);
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
    fail_and_abort(e, rank);
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
