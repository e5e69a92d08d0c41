// What `loss: cross_entropy` needs of its targets on a field output: at every point, the target's channels are the
// class probabilities there (a class index is one-hot: 1 in its channel, 0 in the others), as PyTorch's
// CrossEntropyLoss takes probabilities of shape [N, C, D..]. Checked on the host before a step, so a class index
// written into one channel, or a label map, is refused naming the sample and the point instead of training on
// nonsense.
#pragma once

#include <cstdint>
#include <string>

#include "core/config/sample_shape.h"

namespace sluice::runtime {

// How far a point's probabilities may sum from 1 (float rounding of soft labels stays far below it).
constexpr double kClassMassTolerance = 1e-3;

// "" when every point of every sample of `targets` ([rows][features_of(shape)], host memory, `shape` a field
// [C, D1[, D2[, D3]]]) holds values in [0, 1] that sum to 1 within kClassMassTolerance; else a message naming the
// first bad point, e.g. "targets of sample 3 at point [2, 5] are not class probabilities over the 4 channels:
// channel 1 holds nan". NULL is "".
std::string first_invalid_class_target(const float* targets, int64_t rows, const config::SampleShape& shape);

}  // namespace sluice::runtime
