/*
 * A minimal C trainer on Sluice's C API: a small MLP split over 4 pipeline stages (1F1B schedule) learns a
 * smooth function of its inputs from data this program makes itself.
 *
 * Run:  mpirun -np 4 ./train_mlp [steps]
 * Rank 0 prints one line per step, "step N loss L", then "final loss L".
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <sluice/sluice.h>

enum { kInputs = 8, kOutputs = 4, kBatch = 64, kDefaultSteps = 20 };

/* The config is inline so the example is one file; a path to a YAML file works the same way. */
static const char* const kConfig =
    "model:\n"
    "  inputs: 8\n"
    "  layers:\n"
    "    - {type: linear, outputs: 32}\n"
    "    - {type: tanh}\n"
    "    - {type: linear, outputs: 32}\n"
    "    - {type: tanh}\n"
    "    - {type: linear, outputs: 4}\n"
    "pipeline: {stages: 4, schedule: 1f1b, microbatches: 4}\n"
    "loss: mse\n"
    "optimizer: {type: adamw, lr: 0.01}\n"
    "data: {type: external, batch: 64}\n"
    "seed: 7\n";

/* Prints the failing call, its status and Sluice's explanation, then stops every rank. */
static void check(sluice_status status, const char* call) {
  if (status == SLUICE_OK) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "rank %d: %s failed: %s (%s)\n", rank, call, sluice_status_string(status), sluice_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Inputs in [-1, 1) from a fixed-seed generator (identical on every rank); targets a smooth function of them. */
static void make_data(float* inputs, float* targets) {
  unsigned int state = 12345u;
  for (int i = 0; i < kBatch * kInputs; ++i) {
    state = state * 1664525u + 1013904223u; /* LCG: enough for example data, and no libc rand() state */
    inputs[i] = (float)(state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
  }
  for (int row = 0; row < kBatch; ++row) {
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
  const int steps = argc > 1 ? atoi(argv[1]) : kDefaultSteps;
  if (steps <= 0) {
    if (rank == 0) fprintf(stderr, "usage: %s [steps > 0], got '%s'\n", argv[0], argv[1]);
    MPI_Finalize();
    return 2;
  }
  if (sluice_version() != SLUICE_VERSION) {
    if (rank == 0) fprintf(stderr, "libsluice is version %d but sluice.h is %d\n", sluice_version(), SLUICE_VERSION);
    MPI_Finalize();
    return 1;
  }

  /* Every rank passes the whole batch: Sluice reads inputs on the first stage and targets on the last. */
  static float inputs[kBatch * kInputs];
  static float targets[kBatch * kOutputs];
  make_data(inputs, targets);

  sluice_trainer* trainer = NULL;
  check(sluice_trainer_create(MPI_COMM_WORLD, kConfig, &trainer), "sluice_trainer_create");
  check(sluice_trainer_start(trainer), "sluice_trainer_start");
  float loss = 0.0f;
  for (int step = 1; step <= steps; ++step) {
    check(sluice_train_step(trainer, inputs, targets, kBatch, &loss), "sluice_train_step");
    if (rank == 0) printf("step %d loss %.6g\n", step, loss);
  }
  sluice_stats stats = SLUICE_STATS_INIT;
  check(sluice_trainer_stats(trainer, &stats), "sluice_trainer_stats");
  if (rank == 0) printf("final loss %.6g after %lld steps\n", stats.last_loss, (long long)stats.steps);
  sluice_trainer_destroy(trainer);
  MPI_Finalize();
  return 0;
}
