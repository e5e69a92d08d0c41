#include "bench/pipeline/results_table.h"

#include <cmath>
#include <cstdio>

namespace sluice::bench {
namespace {

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

}  // namespace

double ScheduleResult::gap() const { return std::fabs(simulated_bubble - measured_bubble); }

double ScheduleResult::executor_gap() const { return std::fabs(simulated_bubble - executor_bubble); }

double ScheduleResult::efficiency(int ranks) const {
  return seq_ms / (ranks * pipe_ms) / (1.0 - simulated_bubble);
}

void print_markdown_table(std::ostream& out, const std::vector<ScheduleResult>& rows, int ranks) {
  out << "| schedule | T_pipe ms | T_seq ms | simulated bubble | measured bubble | \\|gap\\| | efficiency "
         "| executor bubble | \\|gap\\| executor | F / I / W ms |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const ScheduleResult& r : rows) {
    out << "| " << r.schedule << " | " << fixed(r.pipe_ms, 1) << " | " << fixed(r.seq_ms, 1) << " | "
        << fixed(r.simulated_bubble, 3) << " | " << fixed(r.measured_bubble, 3) << " | " << fixed(r.gap(), 3)
        << " | " << fixed(r.efficiency(ranks), 3) << " | " << fixed(r.executor_bubble, 3) << " | "
        << fixed(r.executor_gap(), 3) << " | " << fixed(r.f_ms, 2) << " / " << fixed(r.i_ms, 2) << " / "
        << fixed(r.w_ms, 2) << " |\n";
  }
}

void print_breakdown_table(std::ostream& out, const std::vector<ScheduleResult>& rows) {
  out << "| schedule | busy ms/rank | wait ms/rank | after last compute ms | optimizer step ms "
         "| simulated makespan ms |\n";
  out << "|---|---:|---:|---:|---:|---:|\n";
  for (const ScheduleResult& r : rows) {
    out << "| " << r.schedule << " | " << fixed(r.busy_ms, 1) << " | " << fixed(r.wait_ms, 1) << " | "
        << fixed(r.outside_ms, 1) << " | " << fixed(r.optimizer_ms, 1) << " | " << fixed(r.simulated_ms, 1)
        << " |\n";
  }
}

}  // namespace sluice::bench
