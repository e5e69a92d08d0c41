// Deterministic synthetic data for examples, tests and benchmarks: every value is a function of
// (seed, step, row) alone, so any rank can generate any slice without communication.
//   inputs:  uniform in [-1, 1], from Random123 Philox4x64 keyed by the seed, counter (step, row, block)
//   targets: a fixed seeded linear map W of the inputs, then
//            kRegression: sin(W x)            (smooth, so an MLP's MSE loss can decrease)
//            kOneHot:     one-hot(argmax W x) (classes for cross-entropy); on a field target (`target_points` > 1,
//                         channels = target_features / target_points) one-hot over the channels at each point
#pragma once

#include <cstdint>
#include <vector>

#include "core/data/data_source.h"
#include "core/data/target_kind.h"

namespace sluice::data {

class SyntheticData : public DataSource {
 public:
  // Throws sluice::Error(kInvalidArgument) for non-positive feature counts or points that do not divide the targets.
  SyntheticData(uint64_t seed, int64_t input_features, int64_t target_features, TargetKind kind,
                int64_t target_points = 1);

  void batch(int64_t step, int64_t first_row, int64_t rows, float* inputs, float* targets) override;
  int64_t input_features() const override { return input_features_; }
  int64_t target_features() const override { return target_features_; }

 private:
  void fill_inputs(int64_t step, int64_t first_row, int64_t rows, float* inputs) const;

  uint64_t seed_;
  int64_t input_features_;
  int64_t target_features_;
  TargetKind kind_;
  int64_t target_points_;  // a field target's points per channel (1: rows)
  std::vector<float> target_map_;  // W, row-major [target_features][input_features]
};

}  // namespace sluice::data
