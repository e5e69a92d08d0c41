// Measured step costs, written by `sluice train --profile FILE` and read by `sluice plan --costs FILE` and
// `pipeline.costs: FILE` (schedule: auto, and the trainer's lowering). One action of a layout with S virtual stages
// and r rows per micro-batch costs
//     fixed + r / S x (per-sample figure)
// where the per-sample figure is the whole model's time per row (a balanced partition is assumed: a stage holds
// 1/S of it) and `fixed` is the per-action term the row count does not pay for (BLAS below its efficient size, the
// executor's bookkeeping per action). The fixed term does not shrink with more stages: it is charged per action,
// so more chunks and more micro-batches pay it more often. A message costs latency + r x seconds per row.
//
// File format (text, one `key value` per line, `#` comments):
//   sluice_cost_profile 2
//   forward_seconds_per_sample 1.2e-05                   (the slope b of a + b x rows, whole model)
//   backward_input_seconds_per_sample 1.1e-05
//   backward_weight_seconds_per_sample 7e-06
//   forward_seconds_per_action 3e-05                     (the fixed term a, per action)
//   backward_input_seconds_per_action 2e-05
//   backward_weight_seconds_per_action 2e-05
//   message_seconds 1.7e-05                              (one message at microbatch_rows)
//   message_latency_seconds 5e-06                        (its fixed part)
//   message_seconds_per_row 3.75e-07
//   microbatch_rows 32                                   (optional, default 1)
//   fit_rows 32 4                                        (optional, informational: the two sizes measured)
//   measured_with zb-h1 stages 2 chunks 1                (optional, informational)
// Every key without "(optional" is required once. Version 1 files (written before the fit) have the first four
// figures and message_seconds only: they load with fixed terms 0 and the message at message_seconds whatever its
// rows, i.e. costs linear in rows as before; with them auto still favours the smallest micro-batches (re-profile).
#pragma once

#include <string>

#include "core/schedule/cost_model.h"

namespace sluice {
namespace schedule {

struct CostProfile {
  int version = 2;                        // of the file it came from (1: no fixed terms)
  double forward_per_sample = 0;          // seconds of F per row through every stage (the slope)
  double backward_input_per_sample = 0;   // I (a fused B counts here, with W = 0)
  double backward_weight_per_sample = 0;  // W
  double forward_per_action = 0;          // fixed seconds of every F action, whatever its rows and stage
  double backward_input_per_action = 0;
  double backward_weight_per_action = 0;
  double message_seconds = 0;             // one activation between two ranks, at microbatch_rows
  double message_latency = 0;             // its fixed part (version 1: all of message_seconds)
  double message_per_row = 0;             // seconds per row of activation on top of the latency
  double microbatch_rows = 1;             // rows per micro-batch of the measuring run (the default for a plan)
  std::string fit_rows;                   // the two micro-batch sizes the fit measured (informational)
  std::string measured_with;              // schedule and layout of the run that measured it
};

// The per-action costs of a layout with `virtual_stages` stages and `rows` samples per micro-batch (seconds).
// Throws Error(kInvalidArgument) unless both are positive.
CostModel costs_for(const CostProfile& profile, int virtual_stages, double rows);

// The profile of a run whose per-action costs were `costs` at `virtual_stages` stages and `rows` rows, measured at
// that one size: no fixed terms (every cost linear in rows), the message all latency.
CostProfile profile_from(const CostModel& costs, int virtual_stages, double rows, const std::string& measured_with);

std::string to_text(const CostProfile& profile);
// Throws Error(kInvalidArgument) naming `source`, the line and the key for a malformed profile.
CostProfile parse_cost_profile(const std::string& content, const std::string& source = "<text>");
// Throw Error(kIo) naming the path when it cannot be read or written.
void save_cost_profile(const CostProfile& profile, const std::string& path);
CostProfile load_cost_profile(const std::string& path);

}  // namespace schedule
}  // namespace sluice
