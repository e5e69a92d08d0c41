#include "core/schedule/forward_only.h"

#include <utility>
#include <vector>

namespace sluice::schedule {

Schedule forward_only(const Schedule& lowered) {
  Schedule s = lowered;
  for (auto& list : s.actions) {
    std::vector<Action> kept;
    for (const auto& a : list) {
      if (a.kind == ActionKind::F || a.kind == ActionKind::SEND_F || a.kind == ActionKind::RECV_F) kept.push_back(a);
    }
    list = std::move(kept);
  }
  return s;
}

}  // namespace sluice::schedule
