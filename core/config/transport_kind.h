// Config key pipeline.transport: how activations move between stages (core/runtime/transport_choice.h has the
// rules). Vocabulary: every layer may include it.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::config {

enum class TransportKind { kAuto, kMpi, kStaged, kNccl };

// auto, mpi, staged, nccl: the spellings of the config, the start report and the errors.
inline const ChoiceTable<TransportKind>& transport_kinds() {
  static const ChoiceTable<TransportKind> table = {{TransportKind::kAuto, "auto"},
                                                   {TransportKind::kMpi, "mpi"},
                                                   {TransportKind::kStaged, "staged"},
                                                   {TransportKind::kNccl, "nccl"}};
  return table;
}
inline const char* transport_kind_name(TransportKind kind) { return transport_kinds().name_of(kind); }

}  // namespace sluice::config
