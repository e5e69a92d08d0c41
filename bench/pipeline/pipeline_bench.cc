// Pipeline training benchmark (issue 3): step time of each schedule against the sequential run, pipeline
// efficiency T_seq / (p * T_pipe) / (1 - simulated bubble), and the measured bubble against the simulator fed
// with the measured F / I / W costs. Run it through run.sh (p = 2 ranks, one BLAS thread per rank, pinned).
// Prints a markdown table on rank 0.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/pipeline/bench_model.h"
#include "core/runtime/measured_costs.h"
#include "core/runtime/message_latency.h"
#include "bench/pipeline/results_table.h"
#include "bench/pipeline/schedule_timing.h"
#include "core/comm/wait_settings.h"
#include "core/common/error.h"
#include "core/data/synthetic_data.h"
#include "core/runtime/sequential_reference.h"

namespace {

using sluice::bench::BenchModel;
using sluice::bench::ScheduleResult;
using sluice::runtime::median;

struct BenchOptions {
  BenchModel model;
  int warmup = 3;
  int steps = 15;
  std::vector<std::string> schedules = {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v"};
  std::string trace_dir;  // where each rank writes its last timed step's action timeline per schedule
};

struct Batch {
  std::vector<float> inputs, targets;
};

Batch make_batch(const BenchModel& model) {
  Batch batch;
  batch.inputs.resize(static_cast<size_t>(model.batch) * model.width);
  batch.targets.resize(batch.inputs.size());
  sluice::data::SyntheticData source(7, model.width, model.width, sluice::data::TargetKind::kRegression);
  source.batch(0, 0, model.batch, batch.inputs.data(), batch.targets.data());
  return batch;
}

// A barrier that sleeps instead of spinning: Open MPI's MPI_Barrier busy-polls, and a spinning neighbour can
// slow rank 0's sequential run where the two "cores" share a physical core or memory bandwidth.
void sleeping_barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  int done = 0;
  for (MPI_Test(&request, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&request, &done, MPI_STATUS_IGNORE)) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// One step of the sequential reference on rank 0 while the other ranks sleep at a barrier (so rank 0 has the
// machine to itself). Returns the step's seconds on rank 0, 0 elsewhere.
double sequential_step(sluice::runtime::SequentialReference* reference, const Batch& batch, int rows) {
  double seconds = 0.0;
  if (reference != nullptr) {
    const auto t0 = std::chrono::steady_clock::now();
    reference->train_step(batch.inputs.data(), batch.targets.data(), rows);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  sleeping_barrier();
  return seconds;
}

// Runs every schedule and the sequential reference round-robin, one step each per round, so that load changes
// of this shared machine hit all of them alike instead of whichever happened to run at the time.
std::vector<ScheduleResult> run_all(const BenchOptions& options, const Batch& batch, double latency, int rank) {
  std::unique_ptr<sluice::runtime::SequentialReference> reference;
  if (rank == 0) {
    reference = std::make_unique<sluice::runtime::SequentialReference>(
        sluice::bench::bench_config(options.model, "1f1b"), 1);
  }
  std::vector<std::unique_ptr<sluice::bench::ScheduleTiming>> timings;
  for (const std::string& name : options.schedules) {
    timings.push_back(std::make_unique<sluice::bench::ScheduleTiming>(
        name, sluice::bench::bench_config(options.model, name)));
  }
  std::vector<double> seq_times;
  for (int round = 0; round < options.warmup + options.steps; ++round) {
    const bool timed = round >= options.warmup;
    const double seq = sequential_step(reference.get(), batch, options.model.batch);
    if (timed) seq_times.push_back(seq);
    for (auto& timing : timings) {
      timing->step(batch.inputs.data(), batch.targets.data(), options.model.batch, timed);
    }
  }
  double seq_seconds = rank == 0 ? median(seq_times, "sequential step times") : 0.0;
  MPI_Bcast(&seq_seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (auto& timing : timings) timing->time_optimizer(5);
  if (!options.trace_dir.empty()) {
    for (auto& timing : timings) timing->write_timeline(options.trace_dir, rank);
  }
  std::vector<ScheduleResult> rows;
  for (const auto& timing : timings) rows.push_back(timing->summarize(latency, seq_seconds));
  return rows;
}

std::string load_average() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

int run(int argc, char** argv) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  CLI::App app{"Sluice pipeline training benchmark: schedules vs the sequential run"};
  BenchOptions options;
  app.add_option("--width", options.model.width, "features of every layer")->check(CLI::PositiveNumber);
  app.add_option("--layers", options.model.layers, "linear+gelu pairs")->check(CLI::PositiveNumber);
  app.add_option("--batch", options.model.batch, "global batch rows per step")->check(CLI::PositiveNumber);
  app.add_option("--microbatches", options.model.microbatches, "micro-batches M")->check(CLI::PositiveNumber);
  app.add_option("--warmup", options.warmup, "untimed steps per schedule")->check(CLI::NonNegativeNumber);
  app.add_option("--steps", options.steps, "timed steps per schedule (median)")->check(CLI::PositiveNumber);
  app.add_option("--schedules", options.schedules, "schedules to time")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v"}));
  app.add_option("--optimizer", options.model.optimizer, "optimizer of every run (adamw: the PyTorch comparison's)")
      ->check(CLI::IsMember({"sgd", "adamw"}));
  app.add_option("--cpu-threads", options.model.cpu_threads,
                 "config cpu_threads: kernel threads per rank (default: the process's, OPENBLAS_NUM_THREADS)")
      ->check(CLI::PositiveNumber);
  app.add_option("--wait", options.model.wait, "config comm.wait of every run")
      ->check(CLI::IsMember({"auto", "spin", "yield", "block"}));
  app.add_option("--trace-dir", options.trace_dir,
                 "write each rank's action timeline of the last timed step to DIR/<schedule>.rank<r>.csv")
      ->check(CLI::ExistingDirectory);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return rank == 0 ? app.exit(error) : (error.get_exit_code() == 0 ? 0 : 1);
  }
  // One rank runs every schedule as a single stage (no messages): the one-process side of the comparison of
  // 1 rank x 2 BLAS threads with 2 ranks x 1 thread.
  options.model.stages = ranks;
  if (options.model.batch % options.model.microbatches != 0) {
    throw sluice::Error(sluice::ErrorCode::kInvalidArgument,
                        "--batch " + std::to_string(options.model.batch) + " is not a multiple of --microbatches " +
                            std::to_string(options.model.microbatches));
  }

  const Batch batch = make_batch(options.model);
  const int64_t message_floats = int64_t{options.model.batch} / options.model.microbatches * options.model.width;
  const double latency =
      ranks > 1 ? sluice::runtime::one_way_message_seconds(MPI_COMM_WORLD, 0, 1, message_floats) : 0.0;
  const std::vector<ScheduleResult> rows = run_all(options, batch, latency, rank);

  if (rank == 0) {
    const char* blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
    std::cout << "p=" << ranks << " ranks, " << options.model.layers << " x (linear " << options.model.width
              << " + gelu), batch " << options.model.batch << ", M=" << options.model.microbatches
              << ", " << options.model.optimizer << "; schedules round-robin, warm-up " << options.warmup
              << ", median of " << options.steps << " steps; OPENBLAS_NUM_THREADS=" << (blas_threads ? blas_threads : "unset")
              << "; comm.wait " << options.model.wait << " (resolved: "
              << sluice::comm::wait_policy_name(sluice::comm::wait_settings().policy) << "); one-way message "
              << 1e6 * latency << " us; load average at end " << load_average() << "\n\n";
    sluice::bench::print_markdown_table(std::cout, rows, ranks);
    std::cout << "\n";
    sluice::bench::print_breakdown_table(std::cout, rows);
    // One line per run for scripts (bench/pipeline/side_by_side.sh), in torch_pipeline.py's format.
    std::cout << "\nschedule sequential median_ms " << rows.front().seq_ms << "\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      std::cout << "schedule " << options.schedules[i] << " median_ms " << rows[i].pipe_ms << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "pipeline_bench: " << error.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
