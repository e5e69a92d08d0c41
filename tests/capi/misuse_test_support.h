// Shared by the C API's misuse tests: this process's MPI rank and world size, the sizes of their small model, an
// application layer y = scale * x (one parameter) written against sluice_layer_ops whose callbacks can be told
// to fail, and a fixed batch.
#pragma once

#include <mpi.h>
#include <sluice/sluice.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/mpi_world.h"

namespace capi_test {

using sluice::testing::world_rank;
using sluice::testing::world_size;

constexpr int kFeatures = 4;
constexpr int kOutputs = 2;
constexpr int kMicrobatches = 4;
constexpr int kBatch = 8;

// Passed as user_data (or NULL: then nothing fails) to make a callback return non-zero.
struct ScaleLayer {
  int fail_forward = 0;
  int fail_backward_input = 0;
  int fail_backward_weight = 0;
};

inline bool fails(void* user_data, int ScaleLayer::*flag) {
  return user_data != nullptr && static_cast<ScaleLayer*>(user_data)->*flag != 0;
}

inline int scale_forward(void* user_data, const float* params, const float* x, float* y, int64_t batch) {
  if (fails(user_data, &ScaleLayer::fail_forward)) return 1;
  for (int64_t i = 0; i < batch * kFeatures; ++i) y[i] = params[0] * x[i];
  return 0;
}

inline int scale_backward_input(void* user_data, const float* params, const float* /*x*/, const float* dy, float* dx,
                                int64_t batch) {
  if (fails(user_data, &ScaleLayer::fail_backward_input)) return 1;
  for (int64_t i = 0; i < batch * kFeatures; ++i) dx[i] = params[0] * dy[i];
  return 0;
}

inline int scale_backward_weight(void* user_data, const float* /*params*/, const float* x, const float* dy,
                                 float* grads, int64_t batch) {
  if (fails(user_data, &ScaleLayer::fail_backward_weight)) return 1;
  for (int64_t i = 0; i < batch * kFeatures; ++i) grads[0] += x[i] * dy[i];
  return 0;
}

inline const float kInitialScale = 0.5f;

inline sluice_layer_ops scale_ops() {
  sluice_layer_ops ops = SLUICE_LAYER_OPS_INIT;
  ops.in_features = kFeatures;
  ops.out_features = kFeatures;
  ops.num_params = 1;
  ops.initial_params = &kInitialScale;
  ops.forward = scale_forward;
  ops.backward_input = scale_backward_input;
  ops.backward_weight = scale_backward_weight;
  return ops;
}

struct Data {
  std::vector<float> inputs = std::vector<float>(kBatch * kFeatures);
  std::vector<float> targets = std::vector<float>(kBatch * kOutputs);
  Data() {
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = static_cast<float>(std::sin(1.0 + static_cast<double>(i)));
    for (size_t i = 0; i < targets.size(); ++i) targets[i] = static_cast<float>(std::cos(static_cast<double>(i)));
  }
};

}  // namespace capi_test
