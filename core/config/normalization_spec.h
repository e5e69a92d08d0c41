// Config section `normalization`: per-feature scaling of the inputs (before the first layer) and of the targets
// (for the loss; predictions are scaled back). A leaf of the typed config; core/config/normalization_parser.cc
// fills it and core/runtime/normalization.h applies it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::config {

// none: the values pass unchanged; given: mean and std come from the config; auto: computed from the first
// `normalization.samples` training samples (core/runtime/normalization.h).
enum class NormalizationMode { kNone, kGiven, kAuto };

// The YAML spellings, indexed by value.
inline const std::vector<std::string>& normalization_mode_names() {
  static const std::vector<std::string> names = {"none", "given", "auto"};
  return names;
}
inline const std::string& normalization_mode_name(NormalizationMode mode) {
  return normalization_mode_names().at(static_cast<std::size_t>(mode));
}

// One side (inputs or targets).
struct NormalizationSide {
  NormalizationMode mode = NormalizationMode::kNone;
  std::vector<double> mean;  // given: one per feature
  std::vector<double> std;   // given: one per feature, each > 0
};

struct NormalizationSpec {
  NormalizationSide inputs;
  NormalizationSide targets;
  int64_t samples = 1024;  // auto: how many of the first training samples the statistics come from
  // given without lists: an HDF5 file with datasets <side>_mean and <side>_std, read when the trainer starts
  // (core/data/normalization_file.h), not here: a checkpoint's stored config never needs the file again.
  std::string file;
  bool any() const {
    return inputs.mode != NormalizationMode::kNone || targets.mode != NormalizationMode::kNone;
  }
  bool any_auto() const {
    return inputs.mode == NormalizationMode::kAuto || targets.mode == NormalizationMode::kAuto;
  }
};

}  // namespace sluice::config
