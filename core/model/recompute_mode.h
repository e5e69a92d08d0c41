// The activation recompute modes and their config spellings (`pipeline.recompute: selective`), apart from
// StageModule so the typed config can hold one without depending on kernels.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sluice::model {

enum class RecomputeMode { kNone, kFull, kSelective };

// Indexed by RecomputeMode, in the order error messages list them.
inline const std::vector<std::string>& recompute_mode_names() {
  static const std::vector<std::string> names = {"none", "full", "selective"};
  return names;
}
inline const std::string& recompute_mode_name(RecomputeMode mode) {
  return recompute_mode_names().at(static_cast<std::size_t>(mode));
}

}  // namespace sluice::model
