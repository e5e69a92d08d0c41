#include "core/runtime/accumulation_restore.h"

#include <string>

#include "core/common/error.h"
#include "core/runtime/checkpoint_slots.h"
#include "core/runtime/loaded_values.h"

namespace sluice::runtime {

StagedAccumulation stage_accumulation(const checkpoint::Reader& reader, const std::vector<model::Parameter*>& params,
                                      int saved_replicas, const config::Layout& layout, const config::Config& cfg) {
  if (saved_replicas < 1) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "': /train/accumulation_replicas = " +
                                            std::to_string(saved_replicas) + " is not a replica count");
  }
  StagedAccumulation staged;
  for (model::Parameter* p : params) staged.grads.push_back(&p->grad);
  staged.values.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) staged.values[i].assign(static_cast<size_t>(params[i]->grad.size()), 0.0f);

  // Same replica count: each replica its own sum, bit for bit. Otherwise new replica 0 takes the saved replicas'
  // sums added in replica order (a fixed order, so every run of this restart gives the same bits) and the other
  // new replicas start from zero (see the header).
  const bool same = saved_replicas == layout.data_parallel;
  if (!same && layout.replica != 0) return staged;
  const int first = same ? layout.replica : 0;
  const int last = same ? layout.replica : saved_replicas - 1;
  std::vector<float> term;
  for (int r = first; r <= last; ++r) {
    const std::vector<Slot> slots = accumulation_slots_of(params, r);
    check_compatible(reader, slots, cfg);  // every dataset present with the parameter's shape
    for (size_t i = 0; i < slots.size(); ++i) {
      std::vector<float>& sum = staged.values[i];
      if (r == first) {
        reader.read_into(slots[i].path, sum.data(), sum.size());
        check_loaded_values(reader.file(), slots[i].path, sum.data(), sum.size());
        continue;
      }
      term.resize(sum.size());
      reader.read_into(slots[i].path, term.data(), term.size());
      check_loaded_values(reader.file(), slots[i].path, term.data(), term.size());
      for (size_t j = 0; j < sum.size(); ++j) sum[j] += term[j];
    }
  }
  return staged;
}

}  // namespace sluice::runtime
