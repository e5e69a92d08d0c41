// Two trainers saving and loading in two threads of one process. Debian's parallel HDF5 is not thread-safe:
// without the library's process-wide HDF5 lock this segfaulted in H5Fcreate in about 3 of 40 saves. Each thread
// owns one trainer on MPI_COMM_SELF and its own directory; both loop save + load kIterations times and every
// call must succeed. A crash fails the test (the process dies); so does any status other than SLUICE_OK.
#include <mpi.h>
#include <sluice/sluice.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kIterations = 60;
constexpr int kBatch = 8;

const char* const kConfig =
    "model:\n  inputs: 16\n  layers:\n    - {type: linear, outputs: 64}\n    - {type: gelu}\n"
    "    - {type: linear, outputs: 64}\n    - {type: linear, outputs: 4}\n"
    "pipeline: {stages: 1, microbatches: 2}\noptimizer: {type: adamw, lr: 0.01}\n"
    "data: {type: external, batch: 8}\n";

std::atomic<int> g_failures{0};

void report(int thread, int iteration, const char* call) {
  std::fprintf(stderr, "thread %d, iteration %d: %s failed: %s\n", thread, iteration, call, sluice_last_error());
  ++g_failures;
}

void save_and_load(int thread, const std::string& dir) {
  sluice_trainer* trainer = nullptr;
  if (sluice_trainer_create(MPI_COMM_SELF, kConfig, &trainer) != SLUICE_OK) return report(thread, 0, "create");
  if (sluice_trainer_start(trainer) != SLUICE_OK) return report(thread, 0, "start");
  std::vector<float> x(kBatch * 16), y(kBatch * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.1 * i + thread));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.2 * i));
  for (int i = 0; i < kIterations; ++i) {
    float loss = 0;
    if (sluice_train_step(trainer, x.data(), y.data(), kBatch, &loss) != SLUICE_OK) report(thread, i, "train_step");
    const std::string file = dir + "/ckpt_" + std::to_string(i % 3) + ".h5";
    if (sluice_save_checkpoint(trainer, file.c_str()) != SLUICE_OK) report(thread, i, "save");
    if (sluice_load_checkpoint(trainer, file.c_str()) != SLUICE_OK) report(thread, i, "load");
  }
  sluice_trainer_destroy(trainer);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "MPI gives thread level %d, this test needs MPI_THREAD_MULTIPLE\n", provided);
    MPI_Finalize();
    return 1;
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string base = std::string(tmp ? tmp : "/tmp") + "/concurrent_checkpoint";
  std::filesystem::remove_all(base);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    const std::string dir = base + "/trainer_" + std::to_string(t);
    std::filesystem::create_directories(dir);
    threads.emplace_back(save_and_load, t, dir);
  }
  for (std::thread& thread : threads) thread.join();
  MPI_Finalize();
  std::printf("%d failed calls in 2 threads x %d save+load\n", g_failures.load(), kIterations);
  return g_failures.load() == 0 ? 0 : 1;
}
