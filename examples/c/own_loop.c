/*
 * A simulation code that owns its time loop and trains a Sluice model on the side, the way a Slurm job
 * started with `sluice submit --program` runs it (docs/SLURM.md, "Your own program"):
 *
 *   - at start, sluice_trainer_resume(NULL) continues from the newest checkpoint in checkpoint.dir, if any;
 *   - every time step: one sluice_train_step on data this program makes itself, then sluice_stop_requested;
 *   - when told to stop (SIGUSR1 or SIGTERM on any rank), the checkpoint of that step is already on disk:
 *     exit with SLUICE_EXIT_PREEMPTED (75), which the batch script turns into a requeue (USR1) or leaves
 *     cancelled (SIGTERM from scancel).
 *
 * Run:  SLUICE_CONFIG=cfg.yaml mpirun -np STAGES ./own_loop STEPS [STEP_DELAY_MS]
 *       (or give the config as a third argument). The config needs data: {type: external, batch: N} with
 *       8 inputs and 4 outputs, and checkpoint.dir.
 * Rank 0 prints "own_loop: first step N" (1 on a fresh start), "step N loss L" per step, and at the end either
 * "own_loop: stopped after step N (checkpoint written)" or "own_loop: finished N steps".
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sluice/sluice.h>

enum { kInputs = 8, kOutputs = 4, kMaxBatch = 1024 };

static void check(sluice_status status, const char* call) {
  if (status == SLUICE_OK) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "rank %d: %s failed: %s (%s)\n", rank, call, sluice_status_string(status), sluice_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* This time step's "simulation state": inputs in [-1, 1) from a generator seeded by the step (so a resumed
 * run sees exactly the data the uninterrupted one would), targets a smooth function of them. */
static void make_data(long long step, int batch, float* inputs, float* targets) {
  unsigned int state = 12345u + 7919u * (unsigned int)step;
  for (int i = 0; i < batch * kInputs; ++i) {
    state = state * 1664525u + 1013904223u;
    inputs[i] = (float)(state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
  }
  for (int row = 0; row < batch; ++row) {
    const float* x = inputs + row * kInputs;
    for (int k = 0; k < kOutputs; ++k) {
      float s = 0.0f;
      for (int j = 0; j < kInputs; ++j) s += x[j] * (float)((j + k) % 3 - 1);
      targets[row * kOutputs + k] = 0.5f * sinf(s);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  setvbuf(stdout, NULL, _IOLBF, 0); /* under srun stdout is a pipe: one line at a time, so logs show progress */
  const long long steps = argc > 1 ? atoll(argv[1]) : 0;
  const long delay_ms = argc > 2 ? atol(argv[2]) : 0;
  const char* config = argc > 3 ? argv[3] : getenv("SLUICE_CONFIG");
  if (steps <= 0 || delay_ms < 0 || config == NULL) {
    if (rank == 0) fprintf(stderr, "usage: %s STEPS [STEP_DELAY_MS [CONFIG]] (or CONFIG in SLUICE_CONFIG)\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  static float inputs[kMaxBatch * kInputs];
  static float targets[kMaxBatch * kOutputs];
  const int batch = 32;

  sluice_trainer* trainer = NULL;
  check(sluice_trainer_create(MPI_COMM_WORLD, config, &trainer), "sluice_trainer_create");
  check(sluice_install_signal_handlers(trainer), "sluice_install_signal_handlers");
  check(sluice_trainer_start(trainer), "sluice_trainer_start");
  int64_t done = 0;
  check(sluice_trainer_resume(trainer, NULL, &done), "sluice_trainer_resume");
  if (rank == 0) printf("own_loop: first step %lld\n", (long long)done + 1);

  int exit_status = 0;
  for (long long step = done + 1; step <= steps; ++step) {
    /* ... the simulation's own time step would run here ... */
    if (delay_ms > 0) {
      const struct timespec pause = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
      nanosleep(&pause, NULL);
    }
    make_data(step, batch, inputs, targets);
    float loss = 0.0f;
    check(sluice_train_step(trainer, inputs, targets, batch, &loss), "sluice_train_step");
    if (rank == 0) printf("step %lld loss %.9g\n", step, loss);
    int stop = 0;
    check(sluice_stop_requested(trainer, &stop), "sluice_stop_requested");
    if (stop) {
      if (rank == 0) printf("own_loop: stopped after step %lld (checkpoint written)\n", step);
      exit_status = SLUICE_EXIT_PREEMPTED;
      break;
    }
  }
  if (exit_status == 0 && rank == 0) printf("own_loop: finished %lld steps\n", steps);
  sluice_trainer_destroy(trainer);
  MPI_Finalize();
  return exit_status;
}
