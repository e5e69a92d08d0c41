// Sluice's one way of waiting for another rank: poll a condition, and between polls use the core as the wait
// policy says (comm.wait, wait_policy.h; by default give it away: sleep through what recent waits of the same
// kind all took, yield around when they ended, then sleep with a growing interval up to a millisecond) so that a waiting rank does not compete with the simulation's solver or with its
// peers for the node's cores. A deadline bounds the wait; the caller decides what a missed deadline means
// (usually a TIMEOUT that names the silent rank). MPI requests wait through request_wait.h, which polls here.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/comm/wait_policy.h"

namespace sluice::comm {

// A point in time after which a wait gives up, or none (wait without bound).
class Deadline {
 public:
  // `seconds` <= 0 means no deadline.
  static Deadline after(double seconds);
  static Deadline none() { return Deadline(); }
  bool bounded() const { return bounded_; }
  bool passed() const;
  double seconds() const { return seconds_; }  // the bound it was made with (0 for none)

 private:
  bool bounded_ = false;
  double seconds_ = 0.0;
  std::chrono::steady_clock::time_point at_{};
};

// Calls `done` until it returns true (then returns true) or the deadline passes (then returns false). `done`
// must not block; it is called at least once. Between calls the core is used as the process's wait policy
// says (wait_settings.h), or as `policy` says (kAuto counts as kBlock). `kind` names what is waited for, the
// same text for every wait of that kind (without counters that change from one wait to the next): kAdaptive
// bounds its polling by how long this thread's recent waits of that kind took (adaptive_wait.h).
bool wait_until(const std::function<bool()>& done, const Deadline& deadline);
bool wait_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& kind);
bool wait_until(const std::function<bool()>& done, const Deadline& deadline, WaitPolicy policy);
bool wait_until(const std::function<bool()>& done, const Deadline& deadline, WaitPolicy policy,
                const std::string& kind);

}  // namespace sluice::comm
