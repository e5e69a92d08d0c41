/* A linear layer y = x W^T + b written against the C API's callback interface (plain C), with the same
 * OpenBLAS calls in the same order as Sluice's built-in linear layer (core/model/affine.cc), so a pipeline
 * using it must train bit for bit like one using {type: linear}. */
#ifndef SLUICE_TESTS_CAPI_LINEAR_CALLBACK_H_
#define SLUICE_TESTS_CAPI_LINEAR_CALLBACK_H_

#include <stdint.h>

#include <sluice/sluice.h>

#ifdef __cplusplus
extern "C" {
#endif

/* user_data of the callbacks. params are [W (out x in, row-major) | b (out)], as the built-in orders them. */
typedef struct linear_callback {
  int64_t in_features;
  int64_t out_features;
  int64_t forward_calls; /* lets a test see that the pipeline really ran this code */
} linear_callback;

/* ops for `layer` (num_params = out*in + out); initial_params is left for the caller to set. */
sluice_layer_ops linear_callback_ops(const linear_callback* layer);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_TESTS_CAPI_LINEAR_CALLBACK_H_ */
