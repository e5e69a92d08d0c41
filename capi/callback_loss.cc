#include "capi/callback_loss.h"

#include <string>

#include "core/common/error.h"

namespace sluice::capi {

model::CustomLoss callback_loss(const sluice_loss_ops& ops) {
  return [ops](const float* prediction, const float* targets, int64_t rows, int64_t cols, int64_t global_batch,
               float* grad) {
    double sum = 0.0;
    const int rc = ops.loss(ops.user_data, prediction, targets, rows, cols, global_batch, &sum, grad);
    // The step's agreement carries this to every rank as SLUICE_ERROR_CALLBACK.
    if (rc != 0) throw Error(ErrorCode::kCallback, "loss callback (loss: custom) returned " + std::to_string(rc));
    return sum;
  };
}

}  // namespace sluice::capi
