#include "core/schedule/forward_only.h"

#include <utility>
#include <vector>

namespace sluice::schedule {

Schedule forward_only(const Schedule& lowered) { return forward_only(lowered, lowered.microbatches); }

Schedule forward_only(const Schedule& lowered, int microbatches) {
  Schedule s = lowered;
  s.microbatches = microbatches;
  for (auto& list : s.actions) {
    std::vector<Action> kept;
    for (const auto& a : list) {
      const bool forward = a.kind == ActionKind::F || a.kind == ActionKind::SEND_F || a.kind == ActionKind::RECV_F ||
                           a.kind == ActionKind::SEND_SKIP || a.kind == ActionKind::RECV_SKIP;
      if (forward && a.microbatch < microbatches) kept.push_back(a);
    }
    list = std::move(kept);
  }
  return s;
}

}  // namespace sluice::schedule
