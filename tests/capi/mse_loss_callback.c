#include "tests/capi/mse_loss_callback.h"

static int mse_loss(void* user_data, const float* prediction, const float* targets, int64_t rows, int64_t cols,
                    int64_t global_batch, double* loss_sum, float* grad) {
  mse_loss_callback* state = (mse_loss_callback*)user_data;
  state->calls += 1;
  if (state->fail_at != 0 && state->calls == state->fail_at) return 3;
  /* The built-in: grad_scale = (float)(1 / (batch * features)); grad = grad_scale * 2 * diff; sum / features. */
  const float grad_scale = (float)(1.0 / ((double)global_batch * (double)cols));
  double sum = 0.0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float diff = prediction[i] - targets[i];
    sum += (double)diff * diff;
    grad[i] = grad_scale * 2.0f * diff;
  }
  *loss_sum = sum / (double)cols;
  return 0;
}

sluice_loss_ops mse_loss_callback_ops(mse_loss_callback* state) {
  sluice_loss_ops ops = SLUICE_LOSS_OPS_INIT;
  ops.user_data = state;
  ops.loss = mse_loss;
  return ops;
}
