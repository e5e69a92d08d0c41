#include "capi/callback_loss.h"

#include <cmath>
#include <string>

#include "core/common/error.h"
#include "core/common/non_finite.h"

namespace sluice::capi {

model::CustomLoss callback_loss(const sluice_loss_ops& ops) {
  return [ops](const float* prediction, const float* targets, int64_t rows, int64_t cols, int64_t global_batch,
               float* grad) {
    double sum = 0.0;
    const int rc = ops.loss(ops.user_data, prediction, targets, rows, cols, global_batch, &sum, grad);
    // The step's agreement carries this to every rank as SLUICE_ERROR_CALLBACK.
    if (rc != 0) throw Error(ErrorCode::kCallback, "loss callback (loss: custom) returned " + std::to_string(rc));
    // Named here rather than left to the step's check, which could only name the loss or the last layer.
    // (Predictions that were not finite already are the step's check to report: not this callback's doing.)
    const std::string problem = std::isfinite(sum) ? first_non_finite(grad, rows, cols, "gradient")
                                                   : "non-finite loss sum (" + std::to_string(sum) + ")";
    if (!problem.empty() && first_non_finite(prediction, rows, cols, "predictions").empty()) {
      throw Error(ErrorCode::kNumeric, "loss callback (loss: custom) returned a " + problem);
    }
    return sum;
  };
}

}  // namespace sluice::capi
