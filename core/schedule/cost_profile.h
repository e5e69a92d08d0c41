// Measured step costs, written by `sluice train --profile FILE` and read by `sluice plan --costs FILE` and
// `pipeline.costs: FILE` (schedule: auto, and the trainer's lowering). Stored per sample of the whole model, so a
// plan with other stages, chunks or micro-batch sizes scales them (a balanced partition is assumed): one action of
// a layout with S virtual stages and r rows per micro-batch costs r / S of the per-sample figure.
//
// File format (text, one `key value` per line, `#` comments, every key required once):
//   sluice_cost_profile 1
//   forward_seconds_per_sample 1.2e-05
//   backward_input_seconds_per_sample 1.1e-05
//   backward_weight_seconds_per_sample 7e-06
//   message_seconds 1.7e-05
//   microbatch_rows 32                                    (optional, default 1)
//   measured_with 1f1b stages 2 chunks 1                  (optional, informational)
#pragma once

#include <string>

#include "core/schedule/cost_model.h"

namespace sluice {
namespace schedule {

struct CostProfile {
  double forward_per_sample = 0;          // seconds of F for one sample through every stage
  double backward_input_per_sample = 0;   // I (a fused B counts here, with W = 0)
  double backward_weight_per_sample = 0;  // W
  double message_seconds = 0;             // one activation between two ranks
  double microbatch_rows = 1;             // rows per micro-batch of the measuring run (the default for a plan)
  std::string measured_with;              // schedule and layout of the run that measured it
};

// The per-action costs of a layout with `virtual_stages` stages and `rows` samples per micro-batch (seconds).
// Throws Error(kInvalidArgument) unless both are positive.
CostModel costs_for(const CostProfile& profile, int virtual_stages, double rows);

// The profile of a run whose per-action costs were `costs` at `virtual_stages` stages and `rows` rows.
CostProfile profile_from(const CostModel& costs, int virtual_stages, double rows, const std::string& measured_with);

std::string to_text(const CostProfile& profile);
// Throws Error(kInvalidArgument) naming `source`, the line and the key for a malformed profile.
CostProfile parse_cost_profile(const std::string& content, const std::string& source = "<text>");
// Throw Error(kIo) naming the path when it cannot be read or written.
void save_cost_profile(const CostProfile& profile, const std::string& path);
CostProfile load_cost_profile(const std::string& path);

}  // namespace schedule
}  // namespace sluice
