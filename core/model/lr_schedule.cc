#include "core/model/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace sluice::model {
namespace {

// The schedule proper at t steps after the warmup.
double after_warmup(const config::LrScheduleSpec& spec, double base, int64_t t) {
  const int64_t horizon = spec.total_steps - spec.warmup_steps;
  switch (spec.type) {
    case config::LrScheduleType::kConstant:
    case config::LrScheduleType::kLinearWarmup: return base;
    case config::LrScheduleType::kStep:
      return base * std::pow(spec.gamma, static_cast<double>(t / spec.step_size));
    case config::LrScheduleType::kMultiStep: {
      const auto passed = std::upper_bound(spec.milestones.begin(), spec.milestones.end(), t) - spec.milestones.begin();
      return base * std::pow(spec.gamma, static_cast<double>(passed));
    }
    case config::LrScheduleType::kCosine: {
      if (t >= horizon) return spec.min_lr;
      const double pi = std::acos(-1.0);
      return spec.min_lr + (base - spec.min_lr) * (1.0 + std::cos(pi * static_cast<double>(t) / horizon)) / 2.0;
    }
    case config::LrScheduleType::kPolynomial: {
      const double left = 1.0 - static_cast<double>(std::min(t, horizon)) / static_cast<double>(horizon);
      return spec.final_lr + (base - spec.final_lr) * std::pow(left, spec.power);
    }
  }
  return base;
}

}  // namespace

double scheduled_lr(const config::LrScheduleSpec& spec, double base_lr, int64_t step) {
  if (step < spec.warmup_steps) {
    const double progress = static_cast<double>(step) / static_cast<double>(spec.warmup_steps);
    return base_lr * (spec.start_factor + (1.0 - spec.start_factor) * progress);
  }
  return after_warmup(spec, base_lr, step - spec.warmup_steps);
}

}  // namespace sluice::model
