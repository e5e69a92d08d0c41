#include "core/runtime/cpu_threads.h"

#include <sched.h>

#include <algorithm>
#include <string>
#include <thread>

#include "core/common/error.h"
#include "core/runtime/node_ranks.h"
#include "kernels/cpu/blas_threads.h"

namespace sluice::runtime {

namespace {

int cores_in_affinity_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return 0;  // unknown: treated as unbound
  return CPU_COUNT(&mask);
}

}  // namespace

int auto_cpu_threads(int cores_bound, int cores_on_node, int ranks_on_node) {
  cores_on_node = std::max(cores_on_node, 1);
  if (cores_bound > 0 && cores_bound < cores_on_node) return cores_bound;
  return std::max(1, cores_on_node / std::max(ranks_on_node, 1));
}

int fixed_cpu_threads(int count, int cores_bound) {
  if (cores_bound > 0 && count > cores_bound) {
    throw Error(ErrorCode::kConfig,
                "config: cpu_threads " + std::to_string(count) + " is more than the " + std::to_string(cores_bound) +
                    " core(s) in this rank's affinity mask (sched_getaffinity): set cpu_threads to at most " +
                    std::to_string(cores_bound) + ", or auto, or give the rank more cores (mpirun --bind-to none, "
                    "Slurm --cpus-per-task)");
  }
  return count;
}

int apply_cpu_threads(const config::Config& config, MPI_Comm comm, bool on_cpu) {
  using Mode = config::Config::CpuThreads::Mode;
  // Collective whatever this rank decides, so every rank makes the same calls.
  const int ranks_here = ranks_on_this_node(comm);
  const Mode mode = config.cpu_threads.mode;
  if (!on_cpu || mode == Mode::kDefault || mode == Mode::kKeep) return kernels::blas_thread_count();
  const int threads =
      mode == Mode::kFixed
          ? fixed_cpu_threads(config.cpu_threads.count, cores_in_affinity_mask())
          : auto_cpu_threads(cores_in_affinity_mask(), static_cast<int>(std::thread::hardware_concurrency()),
                             ranks_here);
  kernels::set_blas_thread_count(threads);
  return kernels::blas_thread_count();
}

}  // namespace sluice::runtime
