// Config key pipeline.recompute_halos: what a recomputed forward does with the halos of a layer that runs on a
// block of a domain-split field (pipeline.domain; docs/DOMAIN.md "Recompute and halos"). Vocabulary: every layer
// may include it.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::config {

enum class RecomputeHalos {
  // The recomputed forward fills its halos again: the same messages as the first forward, counted again; nothing
  // is kept for it but the recompute's input.
  kExchange,
  // Each dropped halo layer keeps its halo-filled (padded) input from the first forward until the recompute, which
  // reuses it and sends no message: the step's halo traffic is the run without recompute's, and the stash holds
  // one padded input per halo layer and micro-batch more.
  kStash,
};

// exchange, stash.
inline const ChoiceTable<RecomputeHalos>& recompute_halos_choices() {
  static const ChoiceTable<RecomputeHalos> table = {{RecomputeHalos::kExchange, "exchange"},
                                                    {RecomputeHalos::kStash, "stash"}};
  return table;
}

}  // namespace sluice::config
