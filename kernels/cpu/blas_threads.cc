#include "kernels/cpu/blas_threads.h"

#include <cblas.h>

namespace sluice::kernels {

int blas_thread_count() { return openblas_get_num_threads(); }

void set_blas_thread_count(int threads) { openblas_set_num_threads(threads < 1 ? 1 : threads); }

}  // namespace sluice::kernels
