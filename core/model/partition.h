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

// The checks every split request gets: at least one chunk, at least one layer per chunk (kConfig), and layer costs
// that are >= 0 (kInvalidArgument naming the layer).
void check_split_request(const std::vector<double>& layer_costs, int chunks);

// Layer counts per chunk minimising the largest chunk cost (exact, by dynamic programming in
// O(chunks x layers) time: models with tens of thousands of layers partition in milliseconds). Ties go to the
// latest start of each chunk, walking back from the last, so every rank computes the same answer from the same
// costs. `work`, when given, counts the candidates evaluated.
std::vector<int> balanced_split(const std::vector<double>& layer_costs, int chunks, SplitWork* work = nullptr);

// A partition's costs in one unit (FLOP-equivalents): `layers[i]` is layer i's forward + backward cost per sample;
// `boundaries[i]` what a cut after layer i costs each of the two chunks it separates (sending the activation and
// receiving its gradient, or the reverse: the boundary's bytes ÷ link bandwidth, in FLOPs at the compute rate).
// `boundaries` is empty (no cut costs anything) or has one entry per layer (the last is never a cut).
struct PartitionCosts {
  std::vector<double> layers;
  std::vector<double> boundaries;
};

// Layer counts per chunk minimising the slowest chunk, a chunk [s, e) costing its layers plus the boundaries
// before s and after e - 1. Without boundary costs this is balanced_split(costs.layers, chunks). With them the
// chunk cost is no longer a difference of prefix sums (balanced_split's two pointers rest on that), so the least
// maximum is found by bisection over its value, each candidate checked in O(chunks x layers) (a chunk may end at
// e after one that ended at s iff the cheapest such s is under the candidate); the split is then walked back from
// the last chunk, each chunk starting as late as the candidate allows, so every rank computes the same answer.
// The result's slowest chunk is within a relative 1e-12 of the optimum.
std::vector<int> balanced_split(const PartitionCosts& costs, int chunks, SplitWork* work = nullptr);

// The slowest chunk of `split` under `costs` (as balanced_split weighs it).
double slowest_chunk(const PartitionCosts& costs, const std::vector<int>& split);

// Throws Error(kConfig) unless `split` has `chunks` entries, each >= 1, summing to `num_layers`.
void validate_split(const std::vector<int>& split, int num_layers, int chunks);

std::vector<LayerRange> split_to_ranges(const std::vector<int>& split);

// The partition a run uses: `configured` (pipeline.split) when given, checked; otherwise balanced_split of the
// per-layer costs. Every rank computes the same answer from the same config.
std::vector<int> choose_split(const std::vector<int>& configured, const std::vector<double>& layer_costs, int chunks);
std::vector<int> choose_split(const std::vector<int>& configured, const PartitionCosts& costs, int chunks);

// Per-layer cost for balanced_split: forward + backward FLOPs per sample.
std::vector<double> layer_costs(const std::vector<std::unique_ptr<Layer>>& layers);

}  // namespace sluice::model

namespace sluice::model {

// Moves layers [range.first, range.last) out of the full model (leaving null pointers behind), e.g. to hand a
// rank's chunk to its StageModule.
std::vector<std::unique_ptr<Layer>> take_layers(std::vector<std::unique_ptr<Layer>>& all, LayerRange range);

}  // namespace sluice::model
