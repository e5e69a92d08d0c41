// One schedule's side of the benchmark: owns a Trainer for it, runs one step at a time (so the driver can
// interleave schedules step by step and spread the machine's load changes over all of them), records what each
// timed step measured, and summarizes the medians into a ScheduleResult.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/measured_costs.h"
#include "bench/pipeline/results_table.h"
#include "core/config/config.h"
#include "core/runtime/trainer.h"

namespace sluice::bench {

class ScheduleTiming {
 public:
  // Collective over MPI_COMM_WORLD (builds and starts the Trainer).
  ScheduleTiming(const std::string& schedule, config::Config cfg);

  // Collective. One optimizer step; its measurements are kept when `timed`.
  void step(const float* inputs, const float* targets, int64_t rows, bool timed);

  // Collective. Times `repetitions` extra optimizer steps on this rank's parameters alone (after the timed
  // steps: it changes the weights) and keeps the slowest rank's median, to show how much of the step the
  // trainer spends after the pipeline drains.
  void time_optimizer(int repetitions);

  // Medians over the timed steps; the simulated bubble uses each virtual stage's own mean F / I / W over the timed
  // steps (the stages differ: the last computes the loss, the first skips the model's input gradient) and `latency`
  // (one-way seconds per message). Same answer on every rank. Throws sluice::Error if no step was timed.
  ScheduleResult summarize(double latency_seconds, double seq_seconds) const;

  // This rank's action timeline of the last timed step as CSV (action,start_us,duration_us,gap_before_us: the
  // gap since the previous compute action ended, which holds its receive waits and message calls; start_us on the
  // node's steady clock, so ranks line up), written to `dir`/<schedule>.rank<rank>.csv. Throws
  // sluice::Error(kIo) naming the file if it cannot be written.
  void write_timeline(const std::string& dir, int rank) const;

 private:
  std::string schedule_;
  std::unique_ptr<runtime::Trainer> trainer_;
  std::vector<double> step_seconds_;      // slowest rank
  std::vector<double> measured_bubbles_;  // Trainer::stats().bubble_fraction
  std::vector<double> executor_bubbles_;  // over the executor's compute span
  std::vector<runtime::KindSeconds> busy_;         // per kind, summed over ranks
  std::vector<runtime::KindSeconds> stage_busy_;   // this rank's per virtual stage and kind, over all timed steps
  std::vector<double> wait_seconds_;      // blocked in receives, mean over ranks
  std::vector<double> outside_seconds_;   // step time minus the executor's compute span (slowest ranks)
  double optimizer_seconds_ = 0.0;
  std::vector<runtime::TimedAction> last_timeline_;  // of the last timed step
  double last_start_steady_us_ = 0.0;                 // its zero on the steady clock
};

}  // namespace sluice::bench
