// Runs the inference-only model in a process that never initialises MPI (sluice.h: "MPI need not be initialised"),
// loading and predicting from two threads at once on two models of one checkpoint.
// Usage: model_without_mpi CHECKPOINT_DIR.
// Checks: the load and predictions (batches 1..9) succeed without MPI_Init and leave MPI uninitialised, the outputs
// are finite, and 20 rounds of two threads predicting at once on two models equal the single-threaded predictions
// bit for bit (no shared state between models), and 10 rounds of 4 threads x 200 predictions at once on ONE model equal the
// single-threaded predictions bit for bit (issue 28: two threads on one model shared its micro-batch stash,
// SIGSEGV). Exit 0 on success.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <sluice/sluice.h>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s (%s)\n", what, sluice_last_error());
    ++failures;
  }
}

std::vector<float> inputs_of(int64_t rows, int64_t features, int k) {
  std::vector<float> x(static_cast<size_t>(rows * features));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.11 * i + k));
  return x;
}

// Predictions of batches 1..9 (each from its own inputs), concatenated.
std::vector<float> predictions(sluice_model* m, int64_t in, int64_t out, int* status) {
  std::vector<float> all;
  for (int64_t rows = 1; rows <= 9; ++rows) {
    const std::vector<float> x = inputs_of(rows, in, static_cast<int>(rows));
    std::vector<float> y(static_cast<size_t>(rows * out), NAN);
    if (sluice_model_predict(m, x.data(), y.data(), rows) != SLUICE_OK) *status = 1;
    all.insert(all.end(), y.begin(), y.end());
  }
  return all;
}

// 4 threads, each 200 predictions at once on the one model `m` (batches cycling through 1..9, each thread
// starting elsewhere in the cycle): every output must equal `reference` (predictions() of the same model, serial).
void check_one_model_from_four_threads(sluice_model* m, int64_t in, int64_t out, const std::vector<float>& reference) {
  std::vector<size_t> offset(10, 0);  // where batch `rows` starts in `reference`
  for (int64_t rows = 1; rows < 9; ++rows) offset[rows + 1] = offset[rows] + static_cast<size_t>(rows * out);
  int mismatches[4] = {0, 0, 0, 0}, errors[4] = {0, 0, 0, 0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < 200; ++call) {
        const int64_t rows = 1 + (call + 2 * t) % 9;
        const std::vector<float> x = inputs_of(rows, in, static_cast<int>(rows));
        std::vector<float> y(static_cast<size_t>(rows * out), NAN);
        if (sluice_model_predict(m, x.data(), y.data(), rows) != SLUICE_OK) ++errors[t];
        if (std::memcmp(y.data(), reference.data() + offset[rows], y.size() * sizeof(float)) != 0) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) {
    check(errors[t] == 0, "4 threads on one model: every predict returns SLUICE_OK");
    check(mismatches[t] == 0, "4 threads on one model: every prediction equals the serial one bit for bit");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  sluice_model* a = nullptr;
  sluice_model* b = nullptr;
  // Two loads at once (HDF5 itself is not thread-safe: the loads must take turns inside the library).
  sluice_status status_load_a = SLUICE_OK, status_load_b = SLUICE_OK;
  std::thread load_a([&] { status_load_a = sluice_model_load(argv[1], &a); });
  std::thread load_b([&] { status_load_b = sluice_model_load(argv[1], &b); });
  load_a.join();
  load_b.join();
  check(status_load_a == SLUICE_OK && status_load_b == SLUICE_OK, "two loads at once without MPI_Init");
  if (a == nullptr || b == nullptr) return 1;
  int64_t in = 0, out = 0;
  check(sluice_model_features(a, &in, &out) == SLUICE_OK && in > 0 && out > 0, "features");
  int status = 0;
  const std::vector<float> reference = predictions(a, in, out, &status);
  check(status == 0, "single-threaded predictions");
  for (float v : reference) check(std::isfinite(v), "finite predictions");

  std::vector<float> from_a, from_b;
  int status_a = 0, status_b = 0;
  for (int round = 0; round < 20; ++round) {
    std::thread ta([&] { from_a = predictions(a, in, out, &status_a); });
    std::thread tb([&] { from_b = predictions(b, in, out, &status_b); });
    ta.join();
    tb.join();
    check(status_a == 0 && status_b == 0, "threaded predictions");
    check(from_a.size() == reference.size() &&
              std::memcmp(from_a.data(), reference.data(), reference.size() * sizeof(float)) == 0,
          "thread a equals the single-threaded predictions");
    check(from_b == from_a, "thread b equals thread a");
  }
  for (int round = 0; round < 10; ++round) check_one_model_from_four_threads(a, in, out, reference);
  int initialized = 1;
  MPI_Initialized(&initialized);
  check(initialized == 0, "MPI stays uninitialised");
  sluice_model_destroy(a);
  sluice_model_destroy(b);
  if (failures == 0) std::printf("model without MPI: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
