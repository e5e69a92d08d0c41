#include "core/comm/wait_policy.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace sluice::comm {

const std::vector<std::string>& wait_policy_names() { return config::wait_policies().names(); }

std::string wait_policy_name(WaitPolicy policy) { return config::wait_policies().name_of(policy); }

WaitPolicy choose_wait_policy(WaitPolicy requested, int ranks_on_node, int cores_available) {
  if (requested != WaitPolicy::kAuto) return requested;
  return std::max(ranks_on_node, 1) > std::max(cores_available, 1) ? WaitPolicy::kBlock : WaitPolicy::kAdaptive;
}

int cores_available_to_this_process() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

}  // namespace sluice::comm
