#include "tools/sluice/train_command.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/comm/agreement.h"
#include "core/comm/bounded_finalize.h"
#include "core/common/checked_math.h"
#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/config/domain_layout.h"
#include "core/config/layout.h"
#include "core/data/make_data_source.h"
#include "core/runtime/preemption.h"
#include "core/runtime/run_report.h"
#include "core/runtime/trainer.h"
#include "core/runtime/training_loop.h"
#include "tools/sluice/command_exit.h"
#include "tools/sluice/train_profile.h"
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
  std::string profile;
};

// Human-readable progress: stdout normally; stderr under --json, so stdout holds only JSON objects.
std::ostream& log_stream(const TrainOptions& options) { return options.json ? std::cerr : std::cout; }

// Errors after MPI is up are agreed (comm::agree): every rank holds the same message, so rank 0 prints it
// once and every rank ends cleanly (no MPI_Abort, no rank left waiting).
// A TIMEOUT is different: some rank is stopped or hung, so MPI_Finalize (collective in Open MPI) would wait for
// it forever, and rank 0 may be the silent one. Every live rank prints the message and leaves without it; the
// launcher then ends the job (mpirun and srun stop the remaining ranks when one exits without finalizing).
[[noreturn]] void fail_agreed(const std::exception& e, int rank, double finalize_timeout_s) {
  const auto* error = dynamic_cast<const Error*>(&e);
  if (error != nullptr && error->code() == ErrorCode::kTimeout) {
    std::cerr << "sluice train (rank " << rank << "): " << e.what() << std::endl;
    throw CommandExit{1};
  }
  if (rank == 0) std::cerr << "sluice train: " << e.what() << std::endl;
  comm::finalize_bounded(finalize_timeout_s, 1, "sluice train (rank " + std::to_string(rank) + ")");
  throw CommandExit{1};
}

// Everything every rank needs before the trainer exists; failures are agreed so that all ranks stop together
// (a data file one node cannot read fails there only).
struct Setup {
  config::Config cfg;
  // The samples, whole; null with a split, whose block the trainer's layout decides at start (block_source).
  std::unique_ptr<data::DataSource> source;
};

bool split(const config::Config& cfg) { return config::domain_block_count(cfg.pipeline.domain) > 1; }

// --profile measures a whole sample's costs per stage (pipeline.costs, plan --costs); a split's ranks each time a
// block plus its halo exchanges, which no cost model here takes yet. Refused before anything runs.
void refuse_profile_on_split(const config::Config& cfg, const TrainOptions& options) {
  const int64_t blocks = config::domain_block_count(cfg.pipeline.domain);
  if (options.profile.empty() || blocks <= 1) return;
  throw Error(ErrorCode::kUnsupported,
              "sluice train --profile with pipeline.domain (" + std::to_string(blocks) +
                  " blocks) is not supported: the cost profile is a whole sample's per stage, and a split's ranks "
                  "time a block and its halo exchanges; profile the run without the split (pipeline.domain all 1 or "
                  "absent)");
}

Setup set_up(const TrainOptions& options, int world, int rank) {
  Setup s;
  comm::agree_or_throw(MPI_COMM_WORLD, "sluice train set-up", comm::capture_failure([&] {
                         s.cfg = config::parse_config(options.config, options.overrides);
                         if (!s.cfg.data.given) {  // optional for the C API only: here the samples come from it
                           throw Error(ErrorCode::kConfig,
                                       "config: missing the data section; sluice train reads its samples from it "
                                       "(data: {type: synthetic, batch: N} or {type: hdf5, batch: N, path: FILE})");
                         }
                         // `sluice train` owns its process: its ranks use the cores they own unless told otherwise.
                         if (s.cfg.cpu_threads.mode == config::Config::CpuThreads::Mode::kDefault) {
                           s.cfg.cpu_threads.mode = config::Config::CpuThreads::Mode::kAuto;
                         }
                         refuse_profile_on_split(s.cfg, options);
                         config::make_layout(s.cfg, world, rank);  // a world that does not fit, refused here
                         if (s.cfg.data.type == config::DataType::kExternal) {
                           throw Error(ErrorCode::kConfig,
                                       "data.type external is for the C API; sluice train needs synthetic or hdf5");
                         }
                         if (!split(s.cfg)) s.source = data::make_data_source(s.cfg);
                       }));
  return s;
}

std::string box_text(const config::DomainBox& box) {
  std::string text = "offset [";
  for (size_t d = 0; d < box.offset.size(); ++d) text += (d ? ", " : "") + std::to_string(box.offset[d]);
  text += "], extent [";
  for (size_t d = 0; d < box.extent.size(); ++d) text += (d ? ", " : "") + std::to_string(box.extent[d]);
  return text + "]";
}

// With a split each rank generates or reads its own block of every sample, never a whole field (docs/DOMAIN.md
// "Data on blocks"): the block the trainer gave it at start, which pipeline.rank_order decides (auto from the node
// map, so no layout before start can know it). The source is the even split's block (make_data_source_for_block,
// the split `sluice train` runs); were the trainer ever to run another box for that block, the rank would train on
// the wrong points silently: refused, naming both. Agreed: a data file one node cannot read fails on every rank.
std::unique_ptr<data::DataSource> block_source(const runtime::Trainer& trainer, const config::Config& cfg) {
  std::unique_ptr<data::DataSource> source;
  comm::agree_or_throw(MPI_COMM_WORLD, "sluice train data on blocks", comm::capture_failure([&] {
                         const int block = trainer.layout().block;
                         const config::SampleShape input = config::input_shape_of(cfg.model);
                         const config::DomainBox even =
                             config::even_domain_layout({input.begin() + 1, input.end()}, cfg.pipeline.domain,
                                                        cfg.pipeline.domain_tile)
                                 .box(block);
                         if (!trainer.parts().domain) {
                           throw Error(ErrorCode::kInternal, "sluice train: the trainer runs no domain blocks");
                         }
                         const config::DomainBox ran = trainer.parts().domain->box();
                         if (even.offset != ran.offset || even.extent != ran.extent) {
                           throw Error(ErrorCode::kInternal,
                                       "sluice train: rank " + std::to_string(trainer.layout().rank) +
                                           " holds domain block " + std::to_string(block) + " at " + box_text(ran) +
                                           " but the even split's block " + std::to_string(block) + ", which its "
                                           "data would be cut to, is at " + box_text(even));
                         }
                         source = data::make_data_source_for_block(cfg, block);
                       }));
  return source;
}

// Trains after start-up; returns the exit code. Every error in here is agreed across ranks by the library.
int train(runtime::Trainer& trainer, data::DataSource& source, const TrainOptions& options, int rank) {
  auto log = [&options](const std::string& message) { log_stream(options) << message << std::endl; };
  runtime::RunControl control(trainer, log);
  const std::string layout_text = runtime::layout_description(trainer);
  if (rank == 0) log_stream(options) << layout_text << std::flush;
  if (rank == 0 && std::getenv("SLURM_RESTART_COUNT") != nullptr) {
    log("sluice: SLURM_RESTART_COUNT=" + std::string(std::getenv("SLURM_RESTART_COUNT")));
  }
  control.resume(options.resume, options.auto_resume);
  trainer.set_tracing(!options.trace.empty());

  const int64_t global_batch = trainer.config().data.batch;
  runtime::RunCallbacks callbacks;
  callbacks.log = log;
  callbacks.on_step = [&](const runtime::StepResult& r) {
    if (rank == 0) std::cout << (options.json ? step_json(r, global_batch) : step_line(r, global_batch)) << std::endl;
  };
  const auto t0 = std::chrono::steady_clock::now();
  const runtime::RunOutcome outcome = runtime::run_training(trainer, source, control, callbacks);
  if (outcome == runtime::RunOutcome::kStoppedWithCheckpoint) {
    log("sluice: exiting with " + std::to_string(runtime::kPreemptedExitCode) + " (requeue me)");
    return runtime::kPreemptedExitCode;
  }
  // 75 means "a checkpoint is on disk, requeue me"; with nothing saved a requeue would start over.
  if (outcome == runtime::RunOutcome::kStoppedWithoutCheckpoint) return 1;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const runtime::PipelineStats stats = runtime::gather_stats(trainer);
  if (!options.trace.empty()) runtime::write_trace(trainer, options.trace);
  if (!options.profile.empty() && trainer.steps_done() > 0) write_cost_profile(MPI_COMM_WORLD, trainer, source, options.profile);
  if (rank == 0) {
    std::cout << (options.json ? summary_json(stats, trainer.steps_done(), seconds, trainer.stats().last.loss)
                               : summary_line(stats, trainer.steps_done(), seconds))
              << std::endl;
  }
  return 0;
}

// A std::bad_alloc names nothing. Sizes are bounded at parse time, so what remains is memory this machine does
// not have: name the key and the bytes of the batch buffers, the first allocation that grows with it.
Error out_of_memory(const runtime::Trainer& trainer) {
  const config::Config& cfg = trainer.config();
  const int64_t rows = cfg.data.batch / trainer.layout().data_parallel;
  // The rank's own widths: a domain block's, not the whole field's, under a split.
  const int64_t inputs = trainer.parts().input_features, outputs = trainer.parts().output_features;
  const int64_t floats = checked_mul(rows, inputs + outputs, "batch buffers");
  return Error(ErrorCode::kInvalidArgument,
               "out of memory: data.batch " + std::to_string(cfg.data.batch) + " gives " + std::to_string(rows) +
                   " rows per replica; with " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) +
                   " outputs per row the batch buffers alone need " +
                   std::to_string(checked_float_bytes(floats, "batch buffer bytes")) +
                   " bytes (besides the activations); use a smaller data.batch");
}

void run_training(const TrainOptions& options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);

  // Signals only set a flag; the library's loop acts on it at a step boundary. Installed first, so a warning
  // that arrives during start-up is not fatal (the default action of SIGUSR1 is to terminate).
  runtime::install_preemption_handlers();

  int code = 0;
  // MPI_Finalize is bounded by comm.timeout once the config is read (its default before that).
  double finalize_timeout_s = config::CommSpec{}.timeout;
  try {
    Setup setup = set_up(options, world, rank);
    finalize_timeout_s = setup.cfg.comm.timeout;
    // sluice train has no solver of its own between steps: a rank slow to reach a step is as stuck as one slow
    // inside it, so comm.arrival_timeout defaults to comm.timeout here (the C API's default is no bound).
    if (setup.cfg.comm.arrival_timeout < 0) setup.cfg.comm.arrival_timeout = setup.cfg.comm.timeout;
    runtime::Trainer trainer(MPI_COMM_WORLD, setup.cfg);
    trainer.start();
    if (split(setup.cfg)) setup.source = block_source(trainer, setup.cfg);
    try {
      code = train(trainer, *setup.source, options, rank);
    } catch (const std::bad_alloc&) {
      throw out_of_memory(trainer);
    }
  } catch (const std::exception& e) {
    fail_agreed(e, rank, finalize_timeout_s);
  }
  comm::finalize_bounded(finalize_timeout_s, code, "sluice train (rank " + std::to_string(rank) + ")");
  if (code != 0) throw CommandExit{code};
}

}  // namespace

void register_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a pipelined model (run under mpirun or srun)");
  cmd->add_option("config", options->config, "YAML config file")->required();
  cmd->add_option("--set", options->overrides, "Override a config key: key.path=value (repeatable)")
      ->allow_extra_args(false);  // one value per --set, so a config file after it stays positional
  cmd->add_flag("--json", options->json, "One JSON object per step and a final summary object");
  cmd->add_option("--trace", options->trace, "Write the last step's measured timeline (Chrome trace JSON)");
  cmd->add_option("--profile", options->profile,
                  "Write the last step's measured F / I / W costs and message time, fitted as a + b x rows from a second "
                  "short run at 1/8 the micro-batch rows (for plan --costs, pipeline.costs)");
  cmd->add_option("--resume", options->resume, "Resume from a checkpoint file, or a directory's latest");
  cmd->add_flag("--auto-resume", options->auto_resume,
                "Resume from checkpoint.dir's latest checkpoint if there is one, else start fresh");
  cmd->callback([options] { run_training(*options); });
}

}  // namespace sluice::tools
