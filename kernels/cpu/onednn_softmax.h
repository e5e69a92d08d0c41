// Row softmax and its backward through oneDNN's softmax primitive on the calling thread, for the CPU attention
// (cpu_attention.cc). oneDNN is held at one thread (onednn_one_thread.h) and each row is reduced by the same
// generated code in an order fixed by the row's length, so a row's bits depend on that row alone: not on the batch,
// the row's place, or the rank's thread count. Replaces a scalar loop over std::exp (a tenth of the ViT benchmark's
// step, bench/README.md "Operators").
#pragma once

#include <cstdint>

namespace sluice::kernels {

// Each of the `rows` rows of s [rows][cols] becomes its softmax (its maximum subtracted first), in place.
// Errors: kUnsupported where this oneDNN does not run on OpenMP (its thread count could not be held at one) or has
// no kernel; kInternal when it fails to build or run.
void softmax_rows(int64_t rows, int64_t cols, float* s);

// ds = p ∘ (dp − Σ_j dp_j p_j) per row, for p = softmax rows (softmax_rows' output) and dp the gradient at p; all
// [rows][cols], ds apart from p and dp.
void softmax_rows_backward(int64_t rows, int64_t cols, const float* p, const float* dp, float* ds);

}  // namespace sluice::kernels
