// Config key `device`: what a pipeline stage computes on. The backend registry (kernels/backend_registry.h) is
// asked for a backend by this name. Vocabulary: every layer may include it.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::config {

enum class DeviceKind { kCpu, kCuda };

// cpu, cuda.
inline const ChoiceTable<DeviceKind>& device_kinds() {
  static const ChoiceTable<DeviceKind> table = {{DeviceKind::kCpu, "cpu"}, {DeviceKind::kCuda, "cuda"}};
  return table;
}
inline const char* device_kind_name(DeviceKind kind) { return device_kinds().name_of(kind); }

}  // namespace sluice::config
