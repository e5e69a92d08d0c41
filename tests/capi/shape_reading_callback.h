/* A layer y = p[0] * x (one parameter, out_features = in_features) written in plain C whose callbacks take every
 * shape from sluice_layer_call_info instead of from user_data: one set of callbacks serves layers of any width.
 * user_data only records what the callbacks were told, for the test to check. */
#ifndef SLUICE_TESTS_CAPI_SHAPE_READING_CALLBACK_H_
#define SLUICE_TESTS_CAPI_SHAPE_READING_CALLBACK_H_

#include <stdint.h>

#include <sluice/sluice.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHAPE_LOG_CAPACITY 256

/* One callback invocation as sluice_layer_call_info described it. */
typedef struct shape_log_entry {
  char callback;          /* 'f' forward, 'i' backward_input, 'w' backward_weight */
  sluice_status status;   /* what sluice_layer_call_info returned */
  int64_t batch;          /* the callback's own batch argument */
  sluice_layer_call call; /* what it filled */
  char name[32];          /* call.name, copied (the pointer is only valid during the call) */
} shape_log_entry;

typedef struct shape_log {
  int64_t count;
  shape_log_entry entries[SHAPE_LOG_CAPACITY];
} shape_log;

/* ops of a scale layer `features` wide; initial scale 0.5. user_data must be a shape_log. */
sluice_layer_ops shape_reading_ops(int64_t features);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_TESTS_CAPI_SHAPE_READING_CALLBACK_H_ */
