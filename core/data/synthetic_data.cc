#include "core/data/synthetic_data.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <string>

#include "core/common/checked_math.h"
#include "core/common/error.h"
#include "core/data/batch_arguments.h"
#include "core/data/philox_uniform.h"

namespace sluice::data {

namespace {

// Separate Philox key streams, so the inputs of (step, row) never reuse the numbers that built W.
constexpr uint64_t kInputStream = 1;
constexpr uint64_t kTargetMapStream = 2;

// Fills values[0, count) with uniform [-1, 1] numbers drawn from counters (a, b, block, 0) under `key`.
void fill_uniform(const Philox::key_type& key, uint64_t a, uint64_t b, int64_t count, float* values) {
  fill_uniform_run(key, a, b, 0, 0, count, values);
}

}  // namespace

SyntheticData::SyntheticData(uint64_t seed, int64_t input_features, int64_t target_features, TargetKind kind,
                             int64_t target_points)
    : seed_(seed),
      input_features_(input_features),
      target_features_(target_features),
      kind_(kind),
      target_points_(target_points) {
  if (input_features <= 0 || target_features <= 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "SyntheticData: feature counts must be positive, got inputs=" + std::to_string(input_features) +
                    " targets=" + std::to_string(target_features));
  }
  if (target_points <= 0 || target_features % target_points != 0) {
    throw Error(ErrorCode::kInvalidArgument, "SyntheticData: " + std::to_string(target_points) +
                                                 " target points do not divide the " +
                                                 std::to_string(target_features) + " target features");
  }
  // Scaled so that W x has unit variance for x uniform in [-1, 1]: sin() is then clearly non-linear but
  // not so wiggly that a small MLP cannot fit it.
  const float scale = 3.0f / std::sqrt(static_cast<float>(input_features));
  // Checked: a wrapped product would size the map too small and the loop below would write past it.
  const int64_t elements = checked_mul(target_features, input_features, "synthetic data target map (targets × inputs)");
  try {
    target_map_.resize(static_cast<std::size_t>(elements));
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kInvalidArgument,
                "out of memory: the synthetic data's target map [" + std::to_string(target_features) + "][" +
                    std::to_string(input_features) + "] (outputs × model.inputs) needs " +
                    std::to_string(checked_float_bytes(elements, "synthetic data target map bytes")) + " bytes");
  }
  const Philox::key_type key = {{seed_, kTargetMapStream}};
  for (int64_t output = 0; output < target_features; ++output) {
    float* row = target_map_.data() + output * input_features;
    fill_uniform(key, static_cast<uint64_t>(output), 0, input_features, row);
    for (int64_t i = 0; i < input_features; ++i) row[i] *= scale;
  }
}

void SyntheticData::fill_inputs(int64_t step, int64_t first_row, int64_t rows, float* inputs) const {
  const Philox::key_type key = {{seed_, kInputStream}};
  for (int64_t r = 0; r < rows; ++r) {
    fill_uniform(key, static_cast<uint64_t>(step), static_cast<uint64_t>(first_row + r), input_features_,
                 inputs + r * input_features_);
  }
}

void SyntheticData::batch(int64_t step, int64_t first_row, int64_t rows, float* inputs, float* targets) {
  if (!check_batch_arguments("SyntheticData::batch", step, first_row, rows, inputs, targets)) return;
  fill_inputs(step, first_row, rows, inputs);

  // targets[r] = W * inputs[r], one GEMV per row: a GEMM over the slice could round differently depending on
  // how many rows it sees, and every rank must produce bit-identical targets for a row however the global
  // batch is sliced (data-parallel replicas, a restart with another layout).
  for (int64_t r = 0; r < rows; ++r) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(target_features_), static_cast<int>(input_features_),
                1.0f, target_map_.data(), static_cast<int>(input_features_), inputs + r * input_features_, 1, 0.0f,
                targets + r * target_features_, 1);
  }

  for (int64_t r = 0; r < rows; ++r) {
    float* row = targets + r * target_features_;
    if (kind_ == TargetKind::kRegression) {
      for (int64_t j = 0; j < target_features_; ++j) row[j] = std::sin(row[j]);
    } else {
      // At each point the channels (target_points_ apart) compete; rows are one point of every feature.
      const int64_t channels = target_features_ / target_points_;
      for (int64_t p = 0; p < target_points_; ++p) {
        int64_t winner = 0;
        for (int64_t c = 1; c < channels; ++c) {
          if (row[c * target_points_ + p] > row[winner * target_points_ + p]) winner = c;
        }
        for (int64_t c = 0; c < channels; ++c) row[c * target_points_ + p] = c == winner ? 1.0f : 0.0f;
      }
    }
  }
}

}  // namespace sluice::data
