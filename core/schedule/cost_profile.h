// Measured step costs, written by `sluice train --profile FILE` and read by `sluice plan --costs FILE` and
// `pipeline.costs: FILE` (schedule: auto, and the trainer's lowering). One micro-batch of r rows through the whole
// model costs  a + b x r  per kind (F, I, W): b is the time per row, a the fixed part that the rows do not pay for
// (a GEMM of few rows still reads all its weights: BLAS far below its efficient size; the executor's bookkeeping).
// Both are the whole model's figures; a layout with S virtual stages holds 1/S of the model per stage (a balanced
// partition is assumed), so one of its actions costs (a + b x r) / S. More, smaller micro-batches therefore pay a
// more often; more chunks split it (what a GEMM reads shrinks with the chunk). A message costs latency + r x
// seconds per row.
//
// File format (text, one `key value` per line, `#` comments):
//   sluice_cost_profile 2
//   forward_seconds_per_sample 1.2e-05                   (b: seconds per row, whole model)
//   backward_input_seconds_per_sample 1.1e-05
//   backward_weight_seconds_per_sample 7e-06
//   forward_seconds_per_microbatch 3e-05                 (a: seconds per micro-batch whatever its rows, whole model)
//   backward_input_seconds_per_microbatch 2e-05
//   backward_weight_seconds_per_microbatch 2e-05
//   message_seconds 1.7e-05                              (one message at microbatch_rows)
//   message_latency_seconds 5e-06                        (its fixed part)
//   message_seconds_per_row 3.75e-07
//   microbatch_rows 32                                   (optional, default 1)
//   fit_rows 32 4                                        (optional, informational: the two sizes measured)
//   measured_with zb-h1 stages 2 chunks 1                (optional, informational)
// Every key without "(optional" is required once. Version 1 files (written before the fit) have the first three
// figures and message_seconds only: they load with a = 0 and every message at message_seconds whatever its rows,
// i.e. costs linear in rows as before; with them auto still favours the smallest micro-batches (re-profile).
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
  double forward_per_microbatch = 0;      // fixed seconds of one micro-batch's F through the whole model
  double backward_input_per_microbatch = 0;
  double backward_weight_per_microbatch = 0;
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
