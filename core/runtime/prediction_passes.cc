#include "core/runtime/prediction_passes.h"

namespace sluice::runtime {

std::vector<PredictionPass> prediction_passes(int64_t rows, int microbatches) {
  std::vector<PredictionPass> passes;
  const int64_t whole = rows / microbatches;
  const int64_t left = rows % microbatches;
  if (whole > 0) passes.push_back({whole, microbatches});
  if (left > 0) passes.push_back({1, static_cast<int>(left)});
  return passes;
}

}  // namespace sluice::runtime
