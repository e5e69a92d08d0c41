#include "core/config/comm_parser.h"

#include <cmath>

namespace sluice::config {
namespace {

// Seconds: a finite number >= 0 (0 = no bound). An hour-long solver step is plausible, a year is a typo.
double seconds(const ConfigNode& node) {
  const double value = node.as_double();
  if (!std::isfinite(value) || value < 0.0 || value > 1.0e7) {
    node.fail("expected seconds, a number from 0 (no limit) to 1e7, got " + node.describe_value());
  }
  return value;
}

}  // namespace

CommSpec parse_comm(const ConfigNode& node) {
  node.require_map_with_keys({"timeout", "arrival_timeout", "wait"}, "comm");
  CommSpec comm;
  if (node.has("timeout")) comm.timeout = seconds(node.child("timeout"));
  if (node.has("arrival_timeout")) comm.arrival_timeout = seconds(node.child("arrival_timeout"));
  // The names of comm::WaitPolicy (the config layer may not depend on core/comm); the runtime maps them.
  if (node.has("wait")) comm.wait = node.child("wait").as_choice(wait_policies());
  return comm;
}

}  // namespace sluice::config
