// How `sluice train` reports progress: a readable line per step, or (--json) one JSON object per step and a
// final summary object. Losses are printed with 9 significant digits, enough to round-trip a float.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/runtime/run_report.h"

namespace sluice::tools {

std::string step_line(const runtime::StepResult& r, int64_t global_batch);
std::string step_json(const runtime::StepResult& r, int64_t global_batch);
std::string summary_json(const runtime::PipelineStats& stats, uint64_t steps, double seconds, double last_loss);
std::string summary_line(const runtime::PipelineStats& stats, uint64_t steps, double seconds);

}  // namespace sluice::tools
