// optimizer.lr_schedule: how the learning rate changes with the optimizer step (core/model/lr_schedule.h
// evaluates it). A leaf of the typed config; core/config/lr_schedule_parser.cc fills it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::config {

enum class LrScheduleType { kConstant, kLinearWarmup, kStep, kMultiStep, kCosine, kPolynomial };

// The YAML spellings, indexed by value.
inline const std::vector<std::string>& lr_schedule_type_names() {
  static const std::vector<std::string> names = {"constant", "linear_warmup", "step",
                                                 "multi_step", "cosine", "polynomial"};
  return names;
}
inline const std::string& lr_schedule_type_name(LrScheduleType type) {
  return lr_schedule_type_names().at(static_cast<std::size_t>(type));
}

struct LrScheduleSpec {
  LrScheduleType type = LrScheduleType::kConstant;
  // Linear warmup before the schedule (every type; required by linear_warmup): the factor goes from start_factor
  // to 1 over warmup_steps optimizer steps, and the schedule proper counts its steps from the warmup's end.
  int64_t warmup_steps = 0;
  double start_factor = 1.0 / 3.0;  // PyTorch LinearLR's default
  int64_t step_size = 0;            // step: decay every step_size steps
  double gamma = 0.1;               // step, multi_step: the decay factor
  std::vector<int64_t> milestones;  // multi_step: strictly increasing step numbers
  double min_lr = 0.0;              // cosine: the floor (PyTorch eta_min)
  double final_lr = 0.0;            // polynomial: the value reached at total_steps
  double power = 1.0;               // polynomial
  // cosine, polynomial: the horizon, warmup included. 0 in the file means `steps`; the parser refuses a schedule
  // that needs a horizon when neither is given.
  int64_t total_steps = 0;
};

}  // namespace sluice::config
