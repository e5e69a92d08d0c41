// How a prediction of any batch is cut into micro-batches. sluice_predict (Trainer::predict) and the
// inference-only model (InferenceModel::predict) both follow this one rule, so they run the same GEMM shapes on the
// same rows and agree bit for bit whatever the BLAS library does with the row count (OpenBLAS picks kernels, and
// with them the order of its sums, by matrix size).
#pragma once

#include <cstdint>
#include <vector>

namespace sluice::runtime {

// `microbatches` micro-batches of `microbatch_rows` rows each, one after the other.
struct PredictionPass {
  int64_t microbatch_rows = 0;
  int microbatches = 0;
  int64_t rows() const { return microbatch_rows * microbatches; }
};

// The passes of a batch of `rows` >= 1 under pipeline.microbatches M: first M micro-batches of rows / M rows (the
// training schedule's own shape, absent when rows < M), then the rows % M rows left over, one per micro-batch (at
// most M - 1, so the remainder still fits the forward order of M micro-batches).
std::vector<PredictionPass> prediction_passes(int64_t rows, int microbatches);

}  // namespace sluice::runtime
