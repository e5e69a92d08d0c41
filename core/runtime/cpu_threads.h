// How many threads a cpu rank's kernels use (config key `cpu_threads`, core/config/config.h): the cores the rank
// owns, so that 1 rank on a 2-core node uses both and 2 ranks use one each, without ever taking threads from the
// host program unless its config asks for it. The count lives in the BLAS library's thread setting, the one the
// host and Sluice share (kernels/cpu/blas_threads.h); the CPU backend splits each large product over that many
// threads of its own and runs the library single-threaded inside, putting the setting back once no product runs.
#pragma once

#include <mpi.h>

#include "core/config/config.h"

namespace sluice::runtime {

// The `auto` rule, pure: a rank bound to fewer cores than the node has (mpirun --bind-to, Slurm's
// --cpus-per-task with task binding) uses the cores it is bound to; an unbound rank gets an equal share of the
// node's cores among the node's ranks (at least 1).
int auto_cpu_threads(int cores_bound, int cores_on_node, int ranks_on_node);

// A fixed `cpu_threads: count`, checked against the cores in the rank's affinity mask (`cores_bound`, 0 when
// unknown): more threads than cores only fight each other, so a larger count is Error(kConfig) naming the value,
// the key and the count (issue 28: 32+ under an address-space limit hung at exit inside OpenBLAS).
int fixed_cpu_threads(int count, int cores_bound);

// Collective over `comm` (it counts the node's ranks). Applies config.cpu_threads when `on_cpu` (kDefault and keep
// change nothing) and returns the thread count the rank's kernels then run with. A count above the rank's cores
// (fixed_cpu_threads) throws on that rank after the collective part, before anything is applied.
int apply_cpu_threads(const config::Config& config, MPI_Comm comm, bool on_cpu);

}  // namespace sluice::runtime
