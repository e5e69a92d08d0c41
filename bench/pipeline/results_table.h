// The benchmark's result rows and their markdown rendering (the tables bench/README.md and bench/HISTORY.md quote).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sluice::bench {

struct ScheduleResult {
  std::string schedule;
  double pipe_ms = 0.0;               // median step time of the pipelined run (slowest rank)
  double seq_ms = 0.0;                // median step time of the sequential reference (one rank)
  double simulated_bubble = 0.0;      // simulator fed the measured F / I / W costs and message latency
  double measured_bubble = 0.0;       // Trainer::stats().bubble_fraction: whole step, optimizer included
  double executor_bubble = 0.0;       // same formula over the executor's compute span only (see the README)
  double f_ms = 0.0, i_ms = 0.0, w_ms = 0.0;  // the per-action costs fed to the simulator
  // Where the step time goes (medians): compute per rank, blocked in receives per rank, after the last
  // compute action (optimizer step, loss reduction), and the simulator's makespan for the measured costs.
  double busy_ms = 0.0, wait_ms = 0.0, outside_ms = 0.0, simulated_ms = 0.0;
  double optimizer_ms = 0.0;  // one optimizer step alone (slowest rank), part of outside_ms

  double gap() const;         // |simulated - measured|
  double executor_gap() const;  // |simulated - executor|
  // T_seq / (p * T_pipe) / (1 - simulated bubble): 1 means the pipeline loses only its schedule's bubble.
  double efficiency(int ranks) const;
};

void print_markdown_table(std::ostream& out, const std::vector<ScheduleResult>& rows, int ranks);

// The breakdown table: schedule | busy ms/rank | wait ms/rank | after last compute ms | optimizer step ms |
// simulated makespan ms.
void print_breakdown_table(std::ostream& out, const std::vector<ScheduleResult>& rows);

}  // namespace sluice::bench
