// What the synthetic sources make of their seeded map of the inputs (core/data/synthetic_data.h,
// core/data/synthetic_field_data.h): smooth regression targets, or one-hot classes for cross-entropy.
#pragma once

namespace sluice::data {

enum class TargetKind { kRegression, kOneHot };

}  // namespace sluice::data
