#include "core/runtime/ordered_gradient_reducer.h"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace sluice::runtime {

void OrderedGradientReducer::start(int stage, const std::vector<model::Parameter*>& parameters) {
  Sum& sum = sums_[stage];
  sum.parameters = parameters;
  size_t total = 0;
  for (const model::Parameter* p : parameters) total += static_cast<size_t>(p->grad.size());
  sum.flat.resize(total);
  size_t offset = 0;
  for (const model::Parameter* p : parameters) {
    backend_.to_host(p->grad, sum.flat.data() + offset);
    offset += static_cast<size_t>(p->grad.size());
  }
  sum.request = group_.start_ordered_sum(sum.flat.data(), static_cast<int64_t>(sum.flat.size()));
}

// The sums' first phase overlaps the drain; their second phase starts here. Polling them mid-step (test())
// would start a second phase at a moment that differs between ranks, while another stage's sum may still be
// started afterwards: MPI requires collectives on a communicator to start in the same order on every rank.
void OrderedGradientReducer::finish() {
  for (auto& [stage, sum] : sums_) {
    if (!sum.request) continue;
    sum.request->wait();
    size_t offset = 0;
    for (model::Parameter* p : sum.parameters) {
      p->grad = backend_.from_host(p->grad.rows(), p->grad.cols(), sum.flat.data() + offset);
      offset += static_cast<size_t>(p->grad.size());
    }
    sum.request.reset();
  }
}

}  // namespace sluice::runtime
