#include "bench/pipeline/schedule_timing.h"

#include <algorithm>
#include <fstream>
#include <iomanip>

#include "core/common/error.h"

#include "core/schedule/simulator.h"

namespace sluice::bench {
namespace {

double max_over_ranks(double value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

// End of this rank's last compute action, from the executor's timeline: the pipeline's own span, without the
// optimizer step and loss reduction that the trainer's step time (and so its bubble) also contains.
double executor_span_seconds(const runtime::StepCounters& counters) {
  double end_us = 0.0;
  for (const auto& a : counters.timeline) end_us = std::max(end_us, a.start_us + a.duration_us);
  return end_us * 1e-6;
}

static_assert(static_cast<int>(schedule::ActionKind::I) == static_cast<int>(runtime::ComputeKind::kI) &&
                  static_cast<int>(schedule::ActionKind::W) == static_cast<int>(runtime::ComputeKind::kW),
              "a compute action's kind indexes KindSeconds");

// Adds each compute action of `timeline` to its virtual stage's busy seconds (the names are the actions' text).
void add_stage_busy(const std::vector<runtime::TimedAction>& timeline, std::vector<runtime::KindSeconds>& busy) {
  for (const runtime::TimedAction& timed : timeline) {
    const schedule::Action action = schedule::parse_action(timed.name);
    if (!schedule::is_compute(action.kind) || action.stage < 0 || action.stage >= static_cast<int>(busy.size())) continue;
    busy[action.stage][static_cast<int>(action.kind)] += timed.duration_us * 1e-6;
  }
}

// The per-stage costs of the timed steps: every rank's stage seconds summed (a stage lives on one rank of the
// benchmark's single pipeline), over the schedule's counts times the steps.
std::vector<schedule::StageCost> measured_stage_costs(std::vector<runtime::KindSeconds> busy,
                                                      const schedule::Schedule& compute, int steps) {
  MPI_Allreduce(MPI_IN_PLACE, busy.data(), static_cast<int>(busy.size() * busy[0].size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  std::vector<runtime::KindCounts> counts = runtime::count_compute_actions_per_stage(compute);
  for (runtime::KindCounts& c : counts) {
    for (int& n : c) n *= steps;
  }
  return runtime::stage_costs_from_busy(busy, counts);
}

}  // namespace

ScheduleTiming::ScheduleTiming(const std::string& schedule, config::Config cfg)
    : schedule_(schedule), trainer_(std::make_unique<runtime::Trainer>(MPI_COMM_WORLD, std::move(cfg))) {
  trainer_->start();
  trainer_->set_tracing(true);  // for the executor span and the stages' costs; one small record per compute action
  stage_busy_.assign(trainer_->parts().lowered.num_stages(), runtime::KindSeconds{});
}

void ScheduleTiming::step(const float* inputs, const float* targets, int64_t rows, bool timed) {
  const runtime::StepResult result = trainer_->train_step(inputs, targets, rows);
  const runtime::StepCounters& counters = trainer_->stats().counters;
  runtime::KindSeconds busy = counters.busy_seconds;
  MPI_Allreduce(MPI_IN_PLACE, busy.data(), static_cast<int>(busy.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double step_seconds = max_over_ranks(result.seconds);
  const double span = max_over_ranks(executor_span_seconds(counters));
  double wait = counters.wait_seconds;
  MPI_Allreduce(MPI_IN_PLACE, &wait, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (!timed) return;
  last_timeline_ = counters.timeline;
  add_stage_busy(counters.timeline, stage_busy_);
  last_start_steady_us_ = counters.start_steady_us;
  double busy_total = 0.0;
  for (double b : busy) busy_total += b;
  step_seconds_.push_back(step_seconds);
  measured_bubbles_.push_back(trainer_->stats().bubble_fraction);
  executor_bubbles_.push_back(1.0 - busy_total / (trainer_->layout().stages * span));
  busy_.push_back(busy);
  wait_seconds_.push_back(wait / trainer_->layout().stages);
  outside_seconds_.push_back(step_seconds - span);
}

void ScheduleTiming::time_optimizer(int repetitions) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const double t0 = MPI_Wtime();
    trainer_->parts().optimizer->step();
    times.push_back(MPI_Wtime() - t0);
  }
  optimizer_seconds_ = max_over_ranks(runtime::median(times, "optimizer step times"));
}

ScheduleResult ScheduleTiming::summarize(double latency_seconds, double seq_seconds) const {
  runtime::KindSeconds typical{};
  for (size_t k = 0; k < typical.size(); ++k) {
    std::vector<double> values;
    for (const runtime::KindSeconds& busy : busy_) values.push_back(busy[k]);
    typical[k] = runtime::median(values, "busy seconds");
  }
  const schedule::Schedule compute = schedule::compute_only(trainer_->parts().lowered);
  schedule::CostModel costs = runtime::costs_from_busy(typical, runtime::count_compute_actions(compute), latency_seconds);
  // F / I / W columns stay the means over all stages; the simulation runs every stage at its own costs.
  schedule::CostModel staged = costs;
  staged.per_stage = measured_stage_costs(stage_busy_, compute, static_cast<int>(step_seconds_.size()));

  ScheduleResult result;
  result.schedule = compute.chunks > 1 ? schedule_ + " (v=" + std::to_string(compute.chunks) + ")" : schedule_;
  result.pipe_ms = 1e3 * runtime::median(step_seconds_, "pipelined step times");
  result.seq_ms = 1e3 * seq_seconds;
  const schedule::SimulationResult simulated = schedule::simulate(compute, staged);
  result.simulated_bubble = simulated.bubble_fraction;
  result.measured_bubble = runtime::median(measured_bubbles_, "measured bubbles");
  result.executor_bubble = runtime::median(executor_bubbles_, "executor bubbles");
  std::vector<double> busy_per_rank;
  for (const runtime::KindSeconds& busy : busy_) {
    double total = 0.0;
    for (double b : busy) total += b;
    busy_per_rank.push_back(total / trainer_->layout().stages);
  }
  result.busy_ms = 1e3 * runtime::median(busy_per_rank, "busy seconds per rank");
  result.wait_ms = 1e3 * runtime::median(wait_seconds_, "wait seconds");
  result.outside_ms = 1e3 * runtime::median(outside_seconds_, "seconds outside the executor");
  result.optimizer_ms = 1e3 * optimizer_seconds_;
  result.simulated_ms = 1e3 * simulated.makespan;
  result.f_ms = 1e3 * costs.forward;
  result.i_ms = 1e3 * costs.backward_input;
  result.w_ms = 1e3 * costs.backward_weight;
  return result;
}

void ScheduleTiming::write_timeline(const std::string& dir, int rank) const {
  const std::string path = dir + "/" + schedule_ + ".rank" + std::to_string(rank) + ".csv";
  std::ofstream out(path);
  out << std::fixed << std::setprecision(1) << "action,start_us,duration_us,gap_before_us\n";
  double previous_end = 0.0;
  for (const runtime::TimedAction& a : last_timeline_) {
    out << a.name << "," << last_start_steady_us_ + a.start_us << "," << a.duration_us << ","
        << a.start_us - previous_end << "\n";
    previous_end = a.start_us + a.duration_us;
  }
  if (!out) throw Error(ErrorCode::kIo, "cannot write the timeline file " + path);
}

}  // namespace sluice::bench
