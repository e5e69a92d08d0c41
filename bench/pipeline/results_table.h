// The benchmark's result rows and their markdown rendering (the table bench/README.md quotes).
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
  double measured_bubble = 0.0;       // Trainer::last_bubble_fraction(): whole step, optimizer included
  double executor_bubble = 0.0;       // same formula over the executor's compute span only (see the README)
  double f_ms = 0.0, i_ms = 0.0, w_ms = 0.0;  // the per-action costs fed to the simulator

  double gap() const;         // |simulated - measured|
  double executor_gap() const;  // |simulated - executor|
  // T_seq / (p * T_pipe) / (1 - simulated bubble): 1 means the pipeline loses only its schedule's bubble.
  double efficiency(int ranks) const;
};

void print_markdown_table(std::ostream& out, const std::vector<ScheduleResult>& rows, int ranks);

}  // namespace sluice::bench
