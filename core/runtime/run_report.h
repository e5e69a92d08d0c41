// What a run tells the people watching it: the layout (which rank holds which stage, on which host and
// device), the last step's per-rank counters, and the measured timeline as a Chrome trace. Reporting only:
// nothing here changes training. Every function is collective over the trainer's world (it gathers from all
// ranks through comm::Group) and must be called by every rank.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/runtime/step_counters.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

// Per-rank counters of the last step, gathered so that every rank can report the whole picture.
struct PipelineStats {
  double bubble_fraction = 0.0;           // of this rank's pipeline: 1 - sum(busy) / (P * makespan)
  std::vector<double> busy_seconds;       // per world rank: all compute
  std::vector<std::array<double, kNumComputeKinds>> busy_by_kind;  // per world rank: F, B, I, W
  std::vector<double> wait_seconds;       // per world rank: blocked on receives
  std::vector<double> idle_fraction;      // per world rank: 1 - busy / its pipeline span
  std::vector<double> step_seconds;       // per world rank
  std::vector<double> peak_stash_bytes;   // per world rank
  std::vector<double> peak_stash_microbatches;  // per world rank
  // Per world rank, the last call on a domain split (zeros without one): halo bytes and messages sent to the other
  // blocks, tile-gather bytes sent (StepCounters).
  std::vector<double> halo_bytes_sent;
  std::vector<double> halo_messages_sent;
  std::vector<double> gather_bytes_sent;
};

// Human-readable rank -> (stage, replica, layers, host, device) map. The whole text on world rank 0; the
// other ranks get the header line only.
std::string layout_description(Trainer& trainer);

// The last step's counters of every rank, on every rank.
PipelineStats gather_stats(Trainer& trainer);

// Writes the last step's measured timeline of every rank (tracing must have been on) as Chrome-trace JSON;
// world rank 0 writes the file.
void write_trace(Trainer& trainer, const std::string& path);

}  // namespace sluice::runtime
