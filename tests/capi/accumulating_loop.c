/*
 * An application loop with gradient accumulation and a large simulation state, for tests/capi:
 * mid_window_kill_test.sh. Every time step is one sluice_train_step (the config sets optimizer.accumulate), the
 * simulation's field (FIELD_MB megabytes of float, so that a checkpoint takes long enough to be caught being
 * written) and the time-step counter are registered state, and the loop resumes, polls sluice_stop_requested and
 * exits 75 when stopped, like examples/c/own_loop.c.
 *
 * Usage: SLUICE_CONFIG=cfg.yaml mpirun -np N accumulating_loop TIME_STEPS HOLD_AT FIELD_MB
 *   HOLD_AT (0 = never): after that time step, wait up to 60 s for a preemption signal (polling
 *   sluice_stop_requested), so that a test can signal at a chosen place of an accumulation window.
 * Rank 0 prints "first time step N", "step N loss L", "holding after time step N", and at the end "stopped after
 * time step N" or "finished N time steps".
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sluice/sluice.h>

enum { kInputs = 8, kOutputs = 4, kBatch = 16 };

static int g_rank = 0;

static void check(sluice_status status, const char* call) {
  if (status == SLUICE_OK) return;
  fprintf(stderr, "rank %d: %s failed: %s (%s)\n", g_rank, call, sluice_status_string(status), sluice_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Time step `step`'s training pair, a function of the step alone (a resumed run sees the same data). */
static void make_data(int64_t step, float* inputs, float* targets) {
  uint32_t state = 2654435761u * (uint32_t)step + 1u;
  for (int i = 0; i < kBatch * kInputs; ++i) {
    state = state * 1664525u + 1013904223u;
    inputs[i] = (float)(state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
  }
  for (int row = 0; row < kBatch; ++row) {
    for (int k = 0; k < kOutputs; ++k) {
      targets[row * kOutputs + k] = 0.5f * sinf(inputs[row * kInputs + k] + inputs[row * kInputs + k + 4]);
    }
  }
}

/* The simulation's step: every cell of the field changes, so a lost or stale field shows in the final state. */
static void advance_field(float* field, size_t cells, int64_t step) {
  for (size_t i = 0; i < cells; ++i) field[i] = 0.5f * field[i] + (float)((i + (size_t)step) % 7);
}

/* After time step `step`: wait (up to 60 s) for a signal, asking the library each 50 ms. Returns the stop flag. */
static int hold_for_signal(sluice_trainer* t, int64_t step) {
  if (g_rank == 0) printf("holding after time step %lld\n", (long long)step);
  int stop = 0;
  const struct timespec pause = {0, 50 * 1000000L};
  for (int tries = 0; tries < 1200 && !stop; ++tries) {
    check(sluice_stop_requested(t, &stop), "sluice_stop_requested");
    if (!stop) nanosleep(&pause, NULL);
  }
  return stop;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* config = getenv("SLUICE_CONFIG");
  if (argc != 4 || config == NULL) {
    if (g_rank == 0) fprintf(stderr, "usage: SLUICE_CONFIG=cfg %s TIME_STEPS HOLD_AT FIELD_MB\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const int64_t steps = atoll(argv[1]), hold_at = atoll(argv[2]);
  const size_t cells = (size_t)atoll(argv[3]) * 1024 * 1024 / sizeof(float);
  float* field = calloc(cells, sizeof(float));
  int64_t time_step = 0;
  float inputs[kBatch * kInputs], targets[kBatch * kOutputs];

  sluice_trainer* t = NULL;
  check(sluice_trainer_create(MPI_COMM_WORLD, config, &t), "sluice_trainer_create");
  check(sluice_register_state(t, "field", field, SLUICE_FLOAT32, (int64_t)cells, SLUICE_STATE_REPLICATED),
        "sluice_register_state field");
  check(sluice_register_state(t, "time_step", &time_step, SLUICE_INT64, 1, SLUICE_STATE_REPLICATED),
        "sluice_register_state time_step");
  check(sluice_install_signal_handlers(t), "sluice_install_signal_handlers");
  check(sluice_trainer_start(t), "sluice_trainer_start");
  int64_t optimizer_steps = 0;
  check(sluice_trainer_resume(t, NULL, &optimizer_steps), "sluice_trainer_resume");
  if (g_rank == 0) printf("first time step %lld\n", (long long)time_step + 1);

  int stop = 0;
  while (time_step < steps && !stop) {
    /* State first, then the step (which may write the periodic checkpoint): a checkpoint holds the state after
     * this time step together with the model that trained on it. */
    make_data(time_step + 1, inputs, targets);
    advance_field(field, cells, time_step + 1);
    ++time_step;
    float loss = 0.0f;
    check(sluice_train_step(t, inputs, targets, kBatch, &loss), "sluice_train_step");
    if (g_rank == 0) printf("step %lld loss %.9g\n", (long long)time_step, loss);
    check(sluice_stop_requested(t, &stop), "sluice_stop_requested");
    if (!stop && time_step == hold_at) stop = hold_for_signal(t, time_step);
  }
  if (g_rank == 0) {
    if (stop) printf("stopped after time step %lld\n", (long long)time_step);
    else printf("finished %lld time steps\n", (long long)steps);
  }
  sluice_trainer_destroy(t);
  free(field);
  MPI_Finalize();
  return stop ? SLUICE_EXIT_PREEMPTED : 0;
}
