// The BLAS library's thread count (OpenBLAS), process-wide: every GEMM of the CPU backend runs on this many
// threads. Read and set only through here so the one place that knows the BLAS library is this file.
#pragma once

namespace sluice::kernels {

int blas_thread_count();
void set_blas_thread_count(int threads);  // threads >= 1

}  // namespace sluice::kernels
