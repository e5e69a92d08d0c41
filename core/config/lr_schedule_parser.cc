#include "core/config/lr_schedule_parser.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace sluice::config {
namespace {

int64_t positive(const ConfigNode& node) {
  const int64_t value = node.as_int();
  if (value <= 0) node.fail("expected a positive integer, got " + node.describe_value());
  return value;
}

double non_negative(const ConfigNode& node) {
  const double value = node.as_double();
  if (!(value >= 0.0 && std::isfinite(value))) node.fail("expected a non-negative number, got " + node.describe_value());
  return value;
}

// The keys each type accepts besides type, warmup_steps and start_factor.
std::vector<std::string> keys_of(LrScheduleType type) {
  std::vector<std::string> keys = {"type", "warmup_steps", "start_factor"};
  switch (type) {
    case LrScheduleType::kConstant:
    case LrScheduleType::kLinearWarmup: break;
    case LrScheduleType::kStep: keys.insert(keys.end(), {"step_size", "gamma"}); break;
    case LrScheduleType::kMultiStep: keys.insert(keys.end(), {"milestones", "gamma"}); break;
    case LrScheduleType::kCosine: keys.insert(keys.end(), {"min_lr", "total_steps"}); break;
    case LrScheduleType::kPolynomial: keys.insert(keys.end(), {"final_lr", "power", "total_steps"}); break;
  }
  return keys;
}

std::vector<int64_t> parse_milestones(const ConfigNode& node) {
  std::vector<int64_t> milestones;
  for (const ConfigNode& entry : node.elements()) {
    const int64_t value = positive(entry);
    if (!milestones.empty() && value <= milestones.back()) {
      entry.fail("milestones must be strictly increasing, got " + std::to_string(value) + " after " +
                 std::to_string(milestones.back()));
    }
    milestones.push_back(value);
  }
  if (milestones.empty()) node.fail("multi_step needs at least one milestone");
  return milestones;
}

void parse_type_keys(const ConfigNode& node, LrScheduleSpec& spec) {
  if (node.has("gamma")) {
    spec.gamma = non_negative(node.child("gamma"));
    if (spec.gamma <= 0.0) node.child("gamma").fail("expected a positive decay factor, got 0");
  }
  if (spec.type == LrScheduleType::kStep) spec.step_size = positive(node.child("step_size"));
  if (spec.type == LrScheduleType::kMultiStep) spec.milestones = parse_milestones(node.child("milestones"));
  if (node.has("min_lr")) spec.min_lr = non_negative(node.child("min_lr"));
  if (node.has("final_lr")) spec.final_lr = non_negative(node.child("final_lr"));
  if (node.has("power")) {
    spec.power = non_negative(node.child("power"));
    if (spec.power <= 0.0) node.child("power").fail("expected a positive power, got 0");
  }
  if (node.has("total_steps")) spec.total_steps = positive(node.child("total_steps"));
}

}  // namespace

LrScheduleSpec parse_lr_schedule(const ConfigNode& node) {
  if (!node.is_map()) node.fail("expected {type: ...} (a learning-rate schedule), got " + node.describe_value());
  LrScheduleSpec spec;
  const std::vector<std::string>& names = lr_schedule_type_names();
  const std::string name = node.child("type").as_choice(names);
  spec.type = static_cast<LrScheduleType>(std::find(names.begin(), names.end(), name) - names.begin());
  node.require_map_with_keys(keys_of(spec.type), "lr_schedule " + name);
  if (spec.type == LrScheduleType::kLinearWarmup) {
    spec.warmup_steps = positive(node.child("warmup_steps"));  // the one thing this type does
  } else if (node.has("warmup_steps")) {
    spec.warmup_steps = positive(node.child("warmup_steps"));
  }
  if (node.has("start_factor")) {
    const ConfigNode factor = node.child("start_factor");
    spec.start_factor = factor.as_double();
    if (!(spec.start_factor > 0.0 && spec.start_factor <= 1.0)) {
      factor.fail("expected 0 < start_factor <= 1, got " + factor.describe_value());
    }
    if (spec.warmup_steps == 0) factor.fail("start_factor only applies with warmup_steps");
  }
  parse_type_keys(node, spec);
  return spec;
}

void resolve_lr_horizon(const ConfigNode& optimizer, bool steps_given, int steps, LrScheduleSpec& spec) {
  if (spec.type != LrScheduleType::kCosine && spec.type != LrScheduleType::kPolynomial) return;
  const ConfigNode node = optimizer.child("lr_schedule");
  if (spec.total_steps == 0) {
    if (!steps_given) {
      node.fail("lr_schedule " + lr_schedule_type_name(spec.type) +
                " needs a horizon: set optimizer.lr_schedule.total_steps (or the config's steps)");
    }
    spec.total_steps = steps;
  }
  if (spec.total_steps <= spec.warmup_steps) {
    node.fail("total_steps (" + std::to_string(spec.total_steps) + ") must be greater than warmup_steps (" +
              std::to_string(spec.warmup_steps) + ")");
  }
}

}  // namespace sluice::config
