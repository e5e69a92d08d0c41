#include "tools/sluice/train_report.h"

#include <algorithm>

#include <cstdio>
#include <sstream>

namespace sluice::tools {
namespace {

std::string format(const char* fmt, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, fmt, value);
  return buffer;
}

std::string json_array(const std::vector<double>& values, const char* fmt) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + format(fmt, values[i]);
  return out + "]";
}

// {"F": [per rank], "B": [...], "I": [...], "W": [...]}: where each rank's compute time went.
std::string by_kind(const runtime::PipelineStats& stats) {
  const char* names[runtime::kNumComputeKinds] = {"F", "B", "I", "W"};
  std::string out = "{";
  for (int k = 0; k < runtime::kNumComputeKinds; ++k) {
    std::vector<double> column;
    for (const auto& rank : stats.busy_by_kind) column.push_back(rank[k]);
    out += std::string(k ? ", " : "") + "\"" + names[k] + "\": " + json_array(column, "%.6g");
  }
  return out + "}";
}

double samples_per_second(const runtime::StepResult& r, int64_t global_batch) {
  return r.seconds > 0 ? static_cast<double>(global_batch) / r.seconds : 0.0;
}

}  // namespace

std::string step_line(const runtime::StepResult& r, int64_t global_batch) {
  std::ostringstream out;
  // With optimizer.accumulate, a call that only adds to the gradient belongs to the step it is building.
  out << "step " << (r.stepped ? r.step : r.step + 1);
  if (!r.stepped) out << " (accumulating, call " << r.pending_calls << ")";
  out << "  loss " << format("%.9g", r.loss) << "  samples/s " << format("%.1f", samples_per_second(r, global_batch))
      << "  step_ms " << format("%.3f", r.seconds * 1e3);
  return out.str();
}

std::string step_json(const runtime::StepResult& r, int64_t global_batch) {
  std::ostringstream out;
  out << "{\"step\": " << r.step << ", \"stepped\": " << (r.stepped ? "true" : "false")
      << ", \"pending_calls\": " << r.pending_calls << ", \"loss\": " << format("%.9g", r.loss)
      << ", \"seconds\": " << format("%.6g", r.seconds)
      << ", \"samples_per_second\": " << format("%.6g", samples_per_second(r, global_batch))
      << ", \"grad_norm\": " << format("%.9g", r.grad_norm) << "}";
  return out.str();
}

std::string summary_json(const runtime::PipelineStats& stats, uint64_t steps, double seconds, double last_loss) {
  std::ostringstream out;
  out << "{\"summary\": true, \"steps\": " << steps << ", \"seconds\": " << format("%.6g", seconds)
      << ", \"final_loss\": " << format("%.9g", last_loss)
      << ", \"bubble_fraction\": " << format("%.6g", stats.bubble_fraction)
      << ", \"idle_fraction\": " << json_array(stats.idle_fraction, "%.6g")
      << ", \"peak_stash_bytes\": " << json_array(stats.peak_stash_bytes, "%.0f")
      << ", \"peak_stash_microbatches\": " << json_array(stats.peak_stash_microbatches, "%.0f")
      << ", \"busy_seconds\": " << json_array(stats.busy_seconds, "%.6g")
      << ", \"busy_seconds_by_kind\": " << by_kind(stats) << ", \"wait_seconds\": " << json_array(stats.wait_seconds, "%.6g")
      << ", \"step_seconds\": " << json_array(stats.step_seconds, "%.6g")
      << ", \"halo_bytes_sent\": " << json_array(stats.halo_bytes_sent, "%.0f")
      << ", \"halo_messages_sent\": " << json_array(stats.halo_messages_sent, "%.0f")
      << ", \"gather_bytes_sent\": " << json_array(stats.gather_bytes_sent, "%.0f") << "}";
  return out.str();
}

std::string summary_line(const runtime::PipelineStats& stats, uint64_t steps, double seconds) {
  std::ostringstream out;
  out << "done: " << steps << " steps in " << format("%.3f", seconds) << " s, measured bubble (last step) "
      << format("%.3f", stats.bubble_fraction) << ", peak stash bytes per rank " << json_array(stats.peak_stash_bytes, "%.0f");
  // On a domain split: what each rank sent to the other blocks in the last call (the start report's paper number).
  const bool split = std::any_of(stats.halo_bytes_sent.begin(), stats.halo_bytes_sent.end(), [](double b) { return b > 0; });
  if (split) {
    out << ", halo bytes sent per rank (last call) " << json_array(stats.halo_bytes_sent, "%.0f") << " in "
        << json_array(stats.halo_messages_sent, "%.0f") << " messages, tile-gather bytes sent "
        << json_array(stats.gather_bytes_sent, "%.0f");
  }
  return out.str();
}

}  // namespace sluice::tools
