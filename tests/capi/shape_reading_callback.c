/* See shape_reading_callback.h. Each callback asks sluice_layer_call_info for its shapes, logs the answer, and
 * computes with it: a wrong answer shows both in the log and in the numbers. */
#include "tests/capi/shape_reading_callback.h"

#include <string.h>

static const float kInitialScale = 0.5f;

/* Asks for the current call's shapes and logs them; returns the status (non-zero fails the callback). */
static sluice_status ask(void* user_data, char callback, int64_t batch, sluice_layer_call* call) {
  shape_log* log = (shape_log*)user_data;
  const sluice_status status = sluice_layer_call_info(call);
  if (log->count < SHAPE_LOG_CAPACITY) {
    shape_log_entry* entry = &log->entries[log->count++];
    entry->callback = callback;
    entry->status = status;
    entry->batch = batch;
    entry->call = *call;
    entry->name[0] = '\0';
    if (status == SLUICE_OK && call->name != NULL) {
      strncpy(entry->name, call->name, sizeof(entry->name) - 1);
      entry->name[sizeof(entry->name) - 1] = '\0';
    }
  }
  return status;
}

static int scale_forward(void* user_data, const float* params, const float* x, float* y, int64_t batch) {
  sluice_layer_call call = SLUICE_LAYER_CALL_INIT;
  if (ask(user_data, 'f', batch, &call) != SLUICE_OK) return 1;
  for (int64_t i = 0; i < call.rows * call.out_features; ++i) y[i] = params[0] * x[i];
  return 0;
}

static int scale_backward_input(void* user_data, const float* params, const float* x, const float* dy, float* dx,
                                int64_t batch) {
  sluice_layer_call call = SLUICE_LAYER_CALL_INIT;
  (void)x;
  if (ask(user_data, 'i', batch, &call) != SLUICE_OK) return 1;
  for (int64_t i = 0; i < call.rows * call.in_features; ++i) dx[i] = params[0] * dy[i];
  return 0;
}

static int scale_backward_weight(void* user_data, const float* params, const float* x, const float* dy,
                                 float* grads, int64_t batch) {
  sluice_layer_call call = SLUICE_LAYER_CALL_INIT;
  (void)params;
  if (ask(user_data, 'w', batch, &call) != SLUICE_OK) return 1;
  for (int64_t i = 0; i < call.rows * call.in_features; ++i) grads[0] += x[i] * dy[i];
  return 0;
}

sluice_layer_ops shape_reading_ops(int64_t features) {
  sluice_layer_ops ops = SLUICE_LAYER_OPS_INIT;
  ops.in_features = features;
  ops.out_features = features;
  ops.num_params = 1;
  ops.initial_params = &kInitialScale;
  ops.forward = scale_forward;
  ops.backward_input = scale_backward_input;
  ops.backward_weight = scale_backward_weight;
  return ops;
}
