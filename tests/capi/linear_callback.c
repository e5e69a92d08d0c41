/* See linear_callback.h. Every product is one cblas_sgemm with the arguments CpuBackend::gemm passes for the
 * matching Affine call; the bias loops run in the same row-then-column order as CpuBackend's. */
#include "tests/capi/linear_callback.h"

#include <cblas.h>

static const float* weight_of(const linear_callback* layer, const float* params) {
  (void)layer;
  return params;
}

static const float* bias_of(const linear_callback* layer, const float* params) {
  return params + layer->in_features * layer->out_features;
}

/* Affine::forward: y = x W^T (beta 0), then y += b row by row. */
static int linear_forward(void* user_data, const float* params, const float* x, float* y, int64_t batch) {
  linear_callback* layer = (linear_callback*)user_data;
  const int in = (int)layer->in_features;
  const int out = (int)layer->out_features;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)batch, out, in, 1.0f, x, in, weight_of(layer, params),
              in, 0.0f, y, out);
  const float* b = bias_of(layer, params);
  for (int64_t r = 0; r < batch; ++r) {
    float* row = y + r * out;
    for (int c = 0; c < out; ++c) row[c] += b[c];
  }
  ++layer->forward_calls;
  return 0;
}

/* Affine::backward_input: dx = dy W (beta 0). */
static int linear_backward_input(void* user_data, const float* params, const float* x, const float* dy, float* dx,
                                 int64_t batch) {
  (void)x;
  const linear_callback* layer = (const linear_callback*)user_data;
  const int in = (int)layer->in_features;
  const int out = (int)layer->out_features;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)batch, in, out, 1.0f, dy, out,
              weight_of(layer, params), in, 0.0f, dx, in);
  return 0;
}

/* Affine::accumulate_grads: dW += dy^T x (beta 1), then db += column sums of dy, row by row. */
static int linear_backward_weight(void* user_data, const float* params, const float* x, const float* dy,
                                  float* grads, int64_t batch) {
  (void)params;
  const linear_callback* layer = (const linear_callback*)user_data;
  const int in = (int)layer->in_features;
  const int out = (int)layer->out_features;
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, (int)batch, 1.0f, dy, out, x, in, 1.0f, grads, in);
  float* bias_grad = grads + (int64_t)in * out;
  for (int64_t r = 0; r < batch; ++r) {
    const float* row = dy + r * out;
    for (int c = 0; c < out; ++c) bias_grad[c] += row[c];
  }
  return 0;
}

sluice_layer_ops linear_callback_ops(const linear_callback* layer) {
  sluice_layer_ops ops = SLUICE_LAYER_OPS_INIT;
  ops.in_features = layer->in_features;
  ops.out_features = layer->out_features;
  ops.num_params = layer->in_features * layer->out_features + layer->out_features;
  ops.initial_params = NULL;
  ops.forward = linear_forward;
  ops.backward_input = linear_backward_input;
  ops.backward_weight = linear_backward_weight;
  ops.backward = NULL; /* Sluice then calls backward_input and backward_weight, as for its own layer */
  return ops;
}
