// Config key comm.wait: how Sluice's own waits for other ranks use the core while they wait. What each policy
// does and auto's rule are core/comm/wait_policy.h's. Vocabulary: every layer may include it.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::config {

enum class WaitPolicy {
  kAuto,   // resolved by comm::choose_wait_policy before any wait
  kSpin,   // test again at once: lowest latency, one core busy for the whole wait
  kYield,  // sched_yield between tests (the core goes to any runnable thread); after the first 20 ms of one
           // wait it backs off like kBlock, so a stopped peer does not cost a core for the whole timeout
  kBlock,     // sched_yield for the first 250 us, then sleeps growing to 1 ms: almost no CPU while waiting
  kAdaptive,  // sleeps through the part of a wait that recent waits of the same kind all took, polls only
              // around when they ended, then backs off like kBlock (core/comm/adaptive_wait.h)
};

// auto, spin, yield, block, adaptive.
inline const ChoiceTable<WaitPolicy>& wait_policies() {
  static const ChoiceTable<WaitPolicy> table = {{WaitPolicy::kAuto, "auto"},
                                                {WaitPolicy::kSpin, "spin"},
                                                {WaitPolicy::kYield, "yield"},
                                                {WaitPolicy::kBlock, "block"},
                                                {WaitPolicy::kAdaptive, "adaptive"}};
  return table;
}

}  // namespace sluice::config
