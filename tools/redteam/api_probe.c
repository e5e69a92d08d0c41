/* Probes of the C API for the red team (tools/redteam, issue 28): one probe per process, its verdict in the exit
 * status so that a crash (signal) or a hang (the harness's timeout) is told apart from a wrong answer.
 *
 *   api_probe concurrent MODEL.h5 THREADS CALLS SEED
 *       THREADS threads call sluice_model_predict on ONE model CALLS times each, with batches drawn from SEED;
 *       every output must equal, bit for bit, the same call made before on one thread.
 *   api_probe nonfinite CONFIG ENTRY INDEX VALUE [MODEL.h5]
 *       one non-finite VALUE (nan, inf, -inf) at element INDEX of the array (or the scalar) ENTRY takes; the call
 *       must be refused with a message, nothing may change (layer 0's parameters, the step count, the samples
 *       held), and a clean train step must still succeed afterwards.
 *
 * Exit: 0 as expected; 10 accepted (a silent acceptance); 11 refused but state changed; 12 trainer unusable
 * afterwards; 13 outputs differ between threads; 2 the probe could not be set up (names why on stderr). Built by the
 * harness against an installed tree (mpicc $(pkg-config --cflags --libs sluice)); one MPI rank. */
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/sluice.h>

enum { kOk = 0, kSetup = 2, kAccepted = 10, kChanged = 11, kUnusable = 12, kDiffers = 13 };

static int setup_failed(const char* what) {
  fprintf(stderr, "api_probe: setup failed: %s: %s\n", what, sluice_last_error());
  return kSetup;
}

static uint64_t next_random(uint64_t* state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return *state >> 33;
}

static void fill(float* values, int64_t count, uint64_t seed) {
  for (int64_t i = 0; i < count; ++i) values[i] = (float)((int64_t)next_random(&seed) % 2001 - 1000) / 1000.0f;
}

/* --- concurrent prediction ----------------------------------------------------------------------------------- */

#define kMaxBatch 64
#define kBatches 8

typedef struct {
  sluice_model* model;
  int64_t in, out;
  float* inputs;      /* [kMaxBatch][in] */
  float* expected[kBatches];
  int64_t batch[kBatches];
  int calls;
  uint64_t seed;
  int mismatches, failures;
} Shared;

typedef struct {
  Shared* shared;
  int thread;
  int mismatches, failures;
} Worker;

static void* predict_many(void* arg) {
  Worker* w = (Worker*)arg;
  Shared* s = w->shared;
  uint64_t state = s->seed + 977u * (uint64_t)w->thread;
  float* outputs = malloc(sizeof(float) * kMaxBatch * s->out);
  for (int call = 0; call < s->calls; ++call) {
    const int which = (int)(next_random(&state) % kBatches);
    if (sluice_model_predict(s->model, s->inputs, outputs, s->batch[which]) != SLUICE_OK) {
      ++w->failures;
      continue;
    }
    if (memcmp(outputs, s->expected[which], sizeof(float) * s->batch[which] * s->out) != 0) ++w->mismatches;
  }
  free(outputs);
  return NULL;
}

static int serial_references(Shared* s) {
  uint64_t state = s->seed;
  for (int b = 0; b < kBatches; ++b) {
    s->batch[b] = 1 + (int64_t)(next_random(&state) % kMaxBatch);
    s->expected[b] = malloc(sizeof(float) * s->batch[b] * s->out);
    if (sluice_model_predict(s->model, s->inputs, s->expected[b], s->batch[b]) != SLUICE_OK)
      return setup_failed("serial sluice_model_predict");
  }
  return kOk;
}

static int run_concurrent(const char* path, int threads, int calls, uint64_t seed) {
  Shared s = {0};
  if (sluice_model_load(path, &s.model) != SLUICE_OK) return setup_failed("sluice_model_load");
  if (sluice_model_features(s.model, &s.in, &s.out) != SLUICE_OK) return setup_failed("sluice_model_features");
  s.inputs = malloc(sizeof(float) * kMaxBatch * s.in);
  fill(s.inputs, kMaxBatch * s.in, seed);
  s.calls = calls;
  s.seed = seed;
  if (serial_references(&s) != kOk) return kSetup;
  pthread_t ids[64];
  Worker workers[64];
  if (threads > 64) threads = 64;
  for (int t = 0; t < threads; ++t) {
    workers[t] = (Worker){&s, t, 0, 0};
    pthread_create(&ids[t], NULL, predict_many, &workers[t]);
  }
  for (int t = 0; t < threads; ++t) {
    pthread_join(ids[t], NULL);
    s.mismatches += workers[t].mismatches;
    s.failures += workers[t].failures;
  }
  printf("threads %d calls %d: %d mismatches, %d failed calls\n", threads, calls, s.mismatches, s.failures);
  sluice_model_destroy(s.model);
  return s.mismatches || s.failures ? kDiffers : kOk;
}

/* --- non-finite values at an entry point ---------------------------------------------------------------------- */

typedef struct {
  sluice_trainer* t;
  int64_t in, out, batch;
  float *x, *y, *params, *loss_out;
  int64_t params_count;
} Probe;

static int snapshot(Probe* p, float* params, sluice_stats* stats, int64_t* held) {
  if (sluice_get_layer_params(p->t, 0, params, p->params_count) != SLUICE_OK) return 0;
  stats->struct_size = sizeof(*stats);
  if (sluice_trainer_stats(p->t, stats) != SLUICE_OK) return 0;
  return sluice_submitted_count(p->t, held) == SLUICE_OK;
}

static float parse_value(const char* text) {
  if (strcmp(text, "nan") == 0) return NAN;
  if (strcmp(text, "-inf") == 0) return -INFINITY;
  if (strcmp(text, "inf") == 0) return INFINITY;
  return strtof(text, NULL);
}

/* Calls ENTRY with `value` planted at `index` of the array it takes (modulo its size). */
static sluice_status call_entry(Probe* p, const char* entry, int64_t index, float value) {
  float* x = p->x;
  float* y = p->y;
  if (strcmp(entry, "train_step.inputs") == 0) x[index % (p->batch * p->in)] = value;
  if (strcmp(entry, "train_step.targets") == 0) y[index % (p->batch * p->out)] = value;
  if (strncmp(entry, "train_step", 10) == 0) return sluice_train_step(p->t, x, y, p->batch, NULL);
  if (strcmp(entry, "evaluate.inputs") == 0) x[index % (p->batch * p->in)] = value;
  if (strcmp(entry, "evaluate.targets") == 0) y[index % (p->batch * p->out)] = value;
  if (strncmp(entry, "evaluate", 8) == 0) return sluice_evaluate(p->t, x, y, p->batch, NULL);
  if (strcmp(entry, "predict.inputs") == 0) {
    x[index % (p->batch * p->in)] = value;
    float* out = malloc(sizeof(float) * p->batch * p->out);
    const sluice_status s = sluice_predict(p->t, x, out, p->batch);
    free(out);
    return s;
  }
  if (strcmp(entry, "submit_samples.inputs") == 0) x[index % (p->batch * p->in)] = value;
  if (strcmp(entry, "submit_samples.targets") == 0) y[index % (p->batch * p->out)] = value;
  if (strncmp(entry, "submit_samples", 14) == 0) return sluice_submit_samples(p->t, x, y, p->batch);
  if (strcmp(entry, "set_layer_params") == 0) {
    float* params = malloc(sizeof(float) * p->params_count);
    memcpy(params, p->params, sizeof(float) * p->params_count);
    params[index % p->params_count] = value;
    sluice_status s = sluice_set_layer_params(p->t, 0, params, p->params_count);
    free(params);
    return s;
  }
  if (strcmp(entry, "set_learning_rate") == 0) return sluice_set_learning_rate(p->t, value);
  fprintf(stderr, "api_probe: unknown entry %s\n", entry);
  exit(kSetup);
}

static int start_probe(Probe* p, const char* config) {
  if (sluice_trainer_create(MPI_COMM_WORLD, config, &p->t) != SLUICE_OK) return setup_failed("create");
  if (sluice_trainer_start(p->t) != SLUICE_OK) return setup_failed("start");
  if (sluice_trainer_features(p->t, &p->in, &p->out) != SLUICE_OK) return setup_failed("features");
  if (sluice_layer_param_count(p->t, 0, &p->params_count) != SLUICE_OK || p->params_count < 1)
    return setup_failed("layer 0 must have parameters");
  p->batch = 8;
  p->x = malloc(sizeof(float) * p->batch * p->in);
  p->y = malloc(sizeof(float) * p->batch * p->out);
  p->params = malloc(sizeof(float) * p->params_count);
  fill(p->x, p->batch * p->in, 1);
  fill(p->y, p->batch * p->out, 2);
  return kOk;
}

static int run_nonfinite(const char* config, const char* entry, int64_t index, const char* value_text) {
  Probe p = {0};
  if (start_probe(&p, config) != kOk) return kSetup;
  float* after = malloc(sizeof(float) * p.params_count);
  sluice_stats before_stats, after_stats;
  int64_t held_before = 0, held_after = 0;
  if (!snapshot(&p, p.params, &before_stats, &held_before)) return setup_failed("snapshot");
  const sluice_status status = call_entry(&p, entry, index, parse_value(value_text));
  char message[4096];
  snprintf(message, sizeof(message), "%s", sluice_last_error() ? sluice_last_error() : "");
  printf("%s[%lld] = %s: %s %s\n", entry, (long long)index, value_text, sluice_status_string(status),
         status == SLUICE_OK ? "" : message);
  if (!snapshot(&p, after, &after_stats, &held_after)) return kUnusable;
  if (status == SLUICE_OK) return kAccepted;
  if (message[0] == '\0') return kAccepted;
  if (memcmp(p.params, after, sizeof(float) * p.params_count) != 0 || before_stats.steps != after_stats.steps ||
      held_before != held_after)
    return kChanged;
  fill(p.x, p.batch * p.in, 1);
  fill(p.y, p.batch * p.out, 2);
  if (sluice_train_step(p.t, p.x, p.y, p.batch, NULL) != SLUICE_OK) {
    fprintf(stderr, "api_probe: clean step after the refusal failed: %s\n", sluice_last_error());
    return kUnusable;
  }
  sluice_trainer_destroy(p.t);
  return kOk;
}

int main(int argc, char** argv) {
  if (argc >= 6 && strcmp(argv[1], "concurrent") == 0)
    return run_concurrent(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10));
  if (argc >= 6 && strcmp(argv[1], "nonfinite") == 0) {
    MPI_Init(&argc, &argv);
    const int rc = run_nonfinite(argv[2], argv[3], strtoll(argv[4], NULL, 10), argv[5]);
    MPI_Finalize();
    return rc;
  }
  fprintf(stderr, "usage: api_probe concurrent MODEL THREADS CALLS SEED | nonfinite CONFIG ENTRY INDEX VALUE\n");
  return kSetup;
}
