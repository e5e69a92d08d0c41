// Config key pipeline.gradient_sum: how data-parallel replicas sum their gradients
// (core/runtime/gradient_sum_choice.h has the rules). Vocabulary: every layer may include it.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::config {

enum class GradientSumKind { kAuto, kOrdered, kNccl };

// auto, ordered, nccl.
inline const ChoiceTable<GradientSumKind>& gradient_sum_kinds() {
  static const ChoiceTable<GradientSumKind> table = {
      {GradientSumKind::kAuto, "auto"}, {GradientSumKind::kOrdered, "ordered"}, {GradientSumKind::kNccl, "nccl"}};
  return table;
}
inline const char* gradient_sum_kind_name(GradientSumKind kind) { return gradient_sum_kinds().name_of(kind); }

}  // namespace sluice::config
