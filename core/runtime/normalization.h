// Per-feature normalization of inputs and targets (config `normalization`, core/config/normalization_spec.h):
// inputs enter the first layer as (x - mean) / std, targets enter the loss as (y - mean) / std, and predictions
// leave as y * std + mean. Every entry point (train_step, evaluate, predict, the inference-only model) applies the
// same functions below once, to the caller's host arrays, before anything else sees them: one place per rank, so
// every layout (and the sequential reference) computes on the same normalized bits.
//
// Statistics are float32 per feature. `auto` computes them in double from the first `samples` samples of the
// global sample stream (the first training call's global batch, replica-major; fewer when that call has fewer):
// mean = sum / n and the population std sqrt(sum((x - mean)^2) / n) (numpy's np.std, ddof 0), both added in
// sample order. A std that is zero or not a normal float32 (a constant feature) becomes 1, so that feature is
// only shifted.
//
// A field side (a field model input, or a field model output for targets; config/sample_shape.h) is normalized per
// CHANNEL: `auto` computes one mean and std per channel over the samples and all of the channel's points (added in
// sample order, then point order), a given list of C values is per channel, and each statistic applies to the
// channel's ΠD consecutive values of a sample. Rows (and a given list of one value per feature) stay per feature,
// bit for bit as before. A checkpoint stores [C] or [features] (docs/CHECKPOINT_FORMAT.md).
//
// On a domain run (pipeline.domain) a field side's `auto` is formed per canonical tile instead, so that every split
// gives the same bits (normalization_tiles.h); a scaling's `points` are then the rank's block's points per channel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/normalization_spec.h"

namespace sluice::runtime {

// One side's statistics; empty: this side is not normalized.
struct FeatureScaling {
  std::vector<float> mean;
  std::vector<float> std;
  // How many consecutive values of a sample each statistic covers: 1 per feature, a field's ΠD per channel.
  int64_t points = 1;
  bool active() const { return !mean.empty(); }
};

// The statistics of `rows` samples [rows][features] as described above (deterministic: sample order, double):
// per feature when `points` is 1, else per channel of features / points channels of `points` values each.
FeatureScaling statistics_of(const float* samples, int64_t rows, int64_t features, int64_t points = 1);

// (x - mean) / std per feature, into a new array; an inactive scaling copies nothing and returns {}.
std::vector<float> normalized(const float* values, int64_t rows, const FeatureScaling& scaling);
// y * std + mean per feature, in place (nothing when inactive).
void denormalize(float* values, int64_t rows, const FeatureScaling& scaling);

// What a trainer (or the inference model) normalizes with: the config's given statistics, auto sides pending
// until computed, or a checkpoint's statistics.
class Normalization {
 public:
  // Given statistics are set, auto sides are pending. Error(kConfig) naming normalization.<side>_mean/_std when a
  // given list's length is not the feature count, nor the channel count of a field side (the parser checks it too
  // where it knows the output width). `*_points` is a field side's points per channel (ΠD), 1 for rows: such a side
  // is normalized per channel by auto.
  void configure(const config::NormalizationSpec& spec, int64_t input_features, int64_t output_features,
                 int64_t input_points = 1, int64_t output_points = 1);
  int64_t input_points() const { return input_points_; }
  int64_t output_points() const { return output_points_; }

  const config::NormalizationSpec& spec() const { return spec_; }
  const FeatureScaling& inputs() const { return inputs_; }
  const FeatureScaling& targets() const { return targets_; }
  bool inputs_pending() const { return inputs_pending_; }
  bool targets_pending() const { return targets_pending_; }
  bool pending() const { return inputs_pending_ || targets_pending_; }

  // auto's result, or a checkpoint's statistics (an empty scaling leaves that side as configure() set it).
  void set_inputs(FeatureScaling scaling);
  void set_targets(FeatureScaling scaling);
  // Back to configure()'s state (a checkpoint load starts from it).
  void reset() { configure(spec_, input_features_, output_features_, input_points_, output_points_); }

  // Error(kState) when an auto side has no statistics yet; `what` names the call ("sluice_predict").
  void require_ready(const std::string& what) const;

 private:
  config::NormalizationSpec spec_;
  int64_t input_features_ = 0;
  int64_t output_features_ = 0;
  int64_t input_points_ = 1;
  int64_t output_points_ = 1;
  FeatureScaling inputs_;
  FeatureScaling targets_;
  bool inputs_pending_ = false;
  bool targets_pending_ = false;
};

}  // namespace sluice::runtime
