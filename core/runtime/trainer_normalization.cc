// Trainer's side of normalization (normalization.h): auto statistics from the first training call, and the
// normalized copies of a call's arrays that the executor reads instead of the caller's.
#include <algorithm>
#include <exception>
#include <vector>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

void Trainer::compute_auto_normalization(const float* inputs, const float* targets, int64_t rows) {
  // The first n samples of the call's global batch (replica-major: replica r holds samples [r*rows, (r+1)*rows)).
  const int64_t global = rows * layout().data_parallel;
  const int64_t n = std::min<int64_t>(normalization_.spec().samples, global);
  const int64_t first = static_cast<int64_t>(layout().replica) * rows;
  const int64_t mine = std::clamp<int64_t>(n - first, 0, rows);
  // Every sample slot is written by exactly one rank (its replica's first- or last-stage rank) and is 0 elsewhere,
  // so the ordered sum over the world is exact: every rank ends with the same samples in global order, whatever
  // the layout, and computes the same statistics as one process holding the whole batch would.
  auto gathered = [&](const float* data, bool holds, int64_t features, int64_t points) {
    std::vector<float> all(static_cast<size_t>(n * features), 0.0f);
    if (holds && mine > 0) std::copy(data, data + mine * features, all.begin() + first * features);
    parts_.mpi->world_group().start_ordered_sum(all.data(), static_cast<int64_t>(all.size()))->wait();
    return statistics_of(all.data(), n, features, points);
  };
  FeatureScaling input_scaling, target_scaling;
  std::exception_ptr error;
  try {
    if (normalization_.inputs_pending()) input_scaling = gathered(inputs, parts_.holds_first_stage(), parts_.input_features, normalization_.input_points());
    if (normalization_.targets_pending()) {
      target_scaling = gathered(targets, parts_.holds_last_stage(), parts_.output_features,
                                normalization_.output_points());
    }
  } catch (...) {
    error = std::current_exception();  // a timed-out sum on one rank: every rank fails the call with it
  }
  comm::agree_or_throw(parts_.mpi->world(), "normalization statistics (no update applied)", error);
  normalization_.set_inputs(std::move(input_scaling));
  normalization_.set_targets(std::move(target_scaling));
}

Trainer::NormalizedBatch Trainer::normalized_batch(const float* inputs, const float* targets, int64_t rows) const {
  NormalizedBatch batch;
  if (parts_.holds_first_stage()) batch.inputs = normalized(inputs, rows, normalization_.inputs());
  if (parts_.holds_last_stage()) batch.targets = normalized(targets, rows, normalization_.targets());
  batch.in_ptr = batch.inputs.empty() ? inputs : batch.inputs.data();
  batch.target_ptr = batch.targets.empty() ? targets : batch.targets.data();
  return batch;
}

}  // namespace sluice::runtime
