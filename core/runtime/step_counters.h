// What the executor measures while it runs one rank's action list: compute time per action kind, time
// spent waiting for messages, the activation stash high-water marks, and (optionally) every action's
// start and duration for a Chrome-trace timeline in the same format as `sluice plan --format chrome`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::runtime {

enum class ComputeKind { kF = 0, kB = 1, kI = 2, kW = 3 };
constexpr int kNumComputeKinds = 4;

struct TimedAction {
  std::string name;  // the action's text, e.g. "2F0"
  double start_us;   // since the step began
  double duration_us;
};

struct StepCounters {
  std::array<double, kNumComputeKinds> busy_seconds{};  // per compute kind
  double wait_seconds = 0.0;     // blocked in receive waits
  double pipeline_seconds = 0.0;  // wall time of the action list (the schedule's makespan on this rank)
  double step_seconds = 0.0;      // the whole optimizer step: pipeline + gradient sums + optimizer
  // When the action list started, in microseconds of std::chrono::steady_clock: the timeline's zero. Ranks on one
  // node share that clock, so their timelines line up (bench/pipeline/timeline_gaps.py matches sends to receives).
  double start_steady_us = 0.0;
  int peak_stash_microbatches = 0;
  size_t peak_stash_bytes = 0;
  // On a domain split, what this rank sent in the call (the channel's and tile gather's totals, before and after):
  // halo messages and bytes to the other blocks, and the tile partials it contributed to the gathers (gradients,
  // norm statistics, the loss). Zero without pipeline.domain. The halo bytes match domain_step_traffic on paper.
  int64_t halo_bytes_sent = 0;
  int64_t halo_messages_sent = 0;
  int64_t gather_bytes_sent = 0;
  std::vector<TimedAction> timeline;  // filled only when tracing is on

  double busy_total() const {
    double total = 0.0;
    for (double s : busy_seconds) total += s;
    return total;
  }
};

}  // namespace sluice::runtime
