/*
 * Sluice: pipeline-parallel neural-network training for C and Fortran simulation codes.
 *
 * Conventions of this API (read once, they hold everywhere):
 *  - Every function returns a `sluice_status`; SLUICE_OK is 0. On failure, `sluice_last_error()` returns a
 *    message naming what was wrong. No function aborts, exits, or lets a C++ exception escape.
 *  - Handles are opaque. The caller owns what it creates and releases it with the matching destroy call.
 *    Pointers passed in are only borrowed for the duration of the call unless stated otherwise.
 *  - "Collective" functions must be called by every rank of the communicator given to
 *    sluice_trainer_create, in the same order. Non-collective functions are local. A bad argument on some
 *    ranks only (a batch size, a NULL array, a checkpoint path) is agreed on: every rank returns the error.
 *    The one exception is the handle itself: a rank whose handle is NULL or destroyed has no communicator to
 *    agree on, so it returns SLUICE_ERROR_INVALID_ARGUMENT alone while the others wait in the collective.
 *  - Thread safety: a trainer may be used by one thread at a time. sluice_last_error() is per thread.
 *  - Arrays are row-major [batch][features] float32, which is a Fortran array x(features, batch).
 */
#ifndef SLUICE_SLUICE_H_
#define SLUICE_SLUICE_H_

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_VERSION_MAJOR 0
#define SLUICE_VERSION_MINOR 1
#define SLUICE_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, as sluice_version() returns it. */
#define SLUICE_VERSION (SLUICE_VERSION_MAJOR * 10000 + SLUICE_VERSION_MINOR * 100 + SLUICE_VERSION_PATCH)

typedef enum sluice_status {
  SLUICE_OK = 0,
  SLUICE_ERROR_INVALID_ARGUMENT = 1, /* a NULL handle or pointer, a bad size, a bad value */
  SLUICE_ERROR_CONFIG = 2,           /* the YAML config is malformed or inconsistent */
  SLUICE_ERROR_STATE = 3,            /* called out of order (train before start, start twice, ...) */
  SLUICE_ERROR_UNSUPPORTED = 4,      /* valid request this build cannot do */
  SLUICE_ERROR_COMM = 5,             /* MPI / NCCL failure */
  SLUICE_ERROR_CUDA = 6,             /* CUDA failure */
  SLUICE_ERROR_IO = 7,               /* reading or writing a file failed */
  SLUICE_ERROR_CHECKPOINT = 8,       /* a checkpoint is missing, truncated, corrupted or incompatible */
  SLUICE_ERROR_TIMEOUT = 9,          /* an operation did not complete in time */
  SLUICE_ERROR_CALLBACK = 10,        /* an application layer callback returned non-zero */
  SLUICE_ERROR_INTERNAL = 11         /* a bug in Sluice: please report it with the message */
} sluice_status;

typedef struct sluice_trainer sluice_trainer;

/* Statistics of the last completed step (sluice_trainer_stats). */
typedef struct sluice_stats {
  int64_t steps;             /* optimizer steps completed */
  double last_loss;          /* mean loss over the global batch of the last step */
  double last_step_seconds;  /* wall time of the last step on this rank */
  double bubble_fraction;    /* measured idle share of this rank's pipeline in the last step */
  int64_t peak_stash_bytes;  /* largest activation stash on this rank so far */
} sluice_stats;

/*
 * An application-provided layer ("hand off a stage"). Sluice calls these on the rank that owns the layer.
 * `batch` is the micro-batch's row count; x is [batch][in_features], y/dy are [batch][out_features].
 * Parameters live in Sluice: `params` (num_params floats) is the layer's weights and `grads` its gradient
 * buffer, which backward_weight must ACCUMULATE into (grads += ...). A callback returns 0 on success; any
 * other value ends the step on every rank with SLUICE_ERROR_CALLBACK, and the trainer stays usable.
 * forward must be deterministic (it is re-run when activations are recomputed).
 */
typedef struct sluice_layer_ops {
  int64_t in_features;   /* checked against the previous layer's output */
  int64_t out_features;
  int64_t num_params;    /* may be 0 */
  /* Initial values for params (num_params floats); NULL means zeros. Copied at start. */
  const float* initial_params;
  int (*forward)(void* user_data, const float* params, const float* x, float* y, int64_t batch);
  /* dx = dL/dx given dy; x is the same input forward saw. */
  int (*backward_input)(void* user_data, const float* params, const float* x, const float* dy, float* dx,
                        int64_t batch);
  /* grads += dL/dparams given x and dy. May be NULL when num_params == 0. */
  int (*backward_weight)(void* user_data, const float* params, const float* x, const float* dy, float* grads,
                         int64_t batch);
  /* Optional fused backward (NULL: Sluice calls backward_input then backward_weight). */
  int (*backward)(void* user_data, const float* params, const float* x, const float* dy, float* dx,
                  float* grads, int64_t batch);
} sluice_layer_ops;

/* Human-readable name of a status ("SLUICE_ERROR_CONFIG: ..."). Never NULL. Thread-safe. */
const char* sluice_status_string(sluice_status status);

/* Detail of the last failure on the calling thread ("" if none). Valid until the next sluice_* call on
 * this thread. Thread-safe. */
const char* sluice_last_error(void);

/* SLUICE_VERSION of the linked library (compare with the header's macro). Thread-safe. */
int sluice_version(void);

/*
 * Creates a trainer from a YAML config: `config` is YAML text or the path of a YAML file.
 * Collective over `comm` (MPI must be initialized; Sluice duplicates `comm`). On success *out owns a new
 * trainer; on failure *out is set to NULL. Errors: INVALID_ARGUMENT (NULL config/out), CONFIG, STATE (MPI
 * not initialized), IO.
 */
sluice_status sluice_trainer_create(MPI_Comm comm, const char* config, sluice_trainer** out);

/* As sluice_trainer_create, with a Fortran communicator handle (MPI_Fint, e.g. from `mpi` or mpi_f08's
 * comm%MPI_VAL). */
sluice_status sluice_trainer_create_f(MPI_Fint comm, const char* config, sluice_trainer** out);

/*
 * Registers an application layer under `name`, referenced in the config's layer list as
 * `{type: custom, name: NAME}`. Local, before sluice_trainer_start; every rank that may own the layer must
 * register it (simplest: all ranks). `ops` is copied; `user_data` is passed back to every callback and must
 * outlive the trainer. Errors: INVALID_ARGUMENT (NULL, missing forward/backward_input, negative sizes,
 * name registered twice), STATE (after start).
 */
sluice_status sluice_trainer_register_layer(sluice_trainer* t, const char* name, const sluice_layer_ops* ops,
                                            void* user_data);

/* Collective. Partitions the model, allocates and initializes parameters, connects the pipeline.
 * Errors: STATE (started twice), CONFIG (world size vs stages, unknown custom layer, shapes), COMM. */
sluice_status sluice_trainer_start(sluice_trainer* t);

/*
 * Collective. One optimizer step on this data-parallel replica's `batch` samples: `inputs` is
 * [batch][input_features], `targets` [batch][output_features]. Ranks whose stages need no inputs (not the
 * first stage) or no targets (not the last stage) may pass NULL. `batch` must be the same on every rank
 * of a replica and divisible by the config's micro-batch count. *loss receives the mean loss over the
 * global batch (all replicas) on every rank (loss may be NULL).
 * Errors: STATE (not started), INVALID_ARGUMENT (batch, NULL where needed), CALLBACK, COMM.
 */
sluice_status sluice_train_step(sluice_trainer* t, const float* inputs, const float* targets, int64_t batch,
                                float* loss);

/* Collective. Pipelined forward pass only (no dropout): `outputs` [batch][output_features] is filled on
 * every rank; `inputs` may be NULL on ranks without the first stage. Errors as sluice_train_step. */
sluice_status sluice_predict(sluice_trainer* t, const float* inputs, float* outputs, int64_t batch);

/* Collective. Writes every rank's stages to one HDF5 checkpoint at `path` (atomically: a crash leaves any
 * previous file intact) / loads one written with any pipeline layout of the same model.
 * Errors: STATE, IO, CHECKPOINT (corrupted, truncated, other model). Builds without checkpoint support
 * return UNSUPPORTED. */
sluice_status sluice_save_checkpoint(sluice_trainer* t, const char* path);
sluice_status sluice_load_checkpoint(sluice_trainer* t, const char* path);

/*
 * Collective. Stands in for this rank's call of the collective function named `function` (e.g.
 * "sluice_train_step") when the caller found a problem of its own before making that call (an array of the
 * wrong shape, a failed read of its data): the other ranks' calls of `function` then fail together with
 * `status` and `message` (naming this rank), instead of waiting for this rank. Works for sluice_train_step,
 * sluice_predict, sluice_save_checkpoint and sluice_load_checkpoint, each of which starts with this agreement.
 * Returns `status` itself on this rank (with `message` as the last error) once the others have been told.
 * Errors: INVALID_ARGUMENT (bad handle, status SLUICE_OK); before sluice_trainer_start it returns `status`
 * locally, as the other ranks' calls then fail locally with STATE.
 */
sluice_status sluice_join_with_error(sluice_trainer* t, const char* function, sluice_status status,
                                     const char* message);

/* Local. Fills *out with this rank's statistics. Errors: INVALID_ARGUMENT (NULL). */
sluice_status sluice_trainer_stats(const sluice_trainer* t, sluice_stats* out);

/* Local. Sizes of the model's input and output rows (valid after create). */
sluice_status sluice_trainer_features(const sluice_trainer* t, int64_t* input_features, int64_t* output_features);

/* Releases the trainer and everything it allocated (local; NULL is fine). Call it before MPI_Finalize
 * when you can; after MPI_Finalize it still frees memory and skips MPI cleanup. */
void sluice_trainer_destroy(sluice_trainer* t);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_SLUICE_H_ */
