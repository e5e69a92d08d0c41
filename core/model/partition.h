// Splits a model's L layers into K = P*V contiguous chunks (pipeline stages), either balanced by cost or as
// an explicit list of layer counts from the config. Splits may be uneven; every chunk gets at least one layer.
#pragma once

#include <memory>
#include <vector>

#include "core/model/layer.h"

namespace sluice::model {

struct LayerRange {
  int first = 0;  // global index of the chunk's first layer
  int last = 0;   // one past its last layer
  int size() const { return last - first; }
};

// Work done by balanced_split, for tests that check its complexity without a clock.
struct SplitWork {
  long long candidate_costs = 0;  // chunk-start candidates evaluated
};

// Layer counts per chunk minimising the largest chunk cost (exact, by dynamic programming in
// O(chunks x layers) time: models with tens of thousands of layers partition in milliseconds). Ties go to the
// latest start of each chunk, walking back from the last, so every rank computes the same answer from the same
// costs. `work`, when given, counts the candidates evaluated.
std::vector<int> balanced_split(const std::vector<double>& layer_costs, int chunks, SplitWork* work = nullptr);

// Throws Error(kConfig) unless `split` has `chunks` entries, each >= 1, summing to `num_layers`.
void validate_split(const std::vector<int>& split, int num_layers, int chunks);

std::vector<LayerRange> split_to_ranges(const std::vector<int>& split);

// The partition a run uses: `configured` (pipeline.split) when given, checked; otherwise balanced_split of the
// per-layer costs. Every rank computes the same answer from the same config.
std::vector<int> choose_split(const std::vector<int>& configured, const std::vector<double>& layer_costs, int chunks);

// Per-layer cost for balanced_split: forward + backward FLOPs per sample.
std::vector<double> layer_costs(const std::vector<std::unique_ptr<Layer>>& layers);

}  // namespace sluice::model

namespace sluice::model {

// Moves layers [range.first, range.last) out of the full model (leaving null pointers behind), e.g. to hand a
// rank's chunk to its StageModule.
std::vector<std::unique_ptr<Layer>> take_layers(std::vector<std::unique_ptr<Layer>>& all, LayerRange range);

}  // namespace sluice::model
