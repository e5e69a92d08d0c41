// How one training call's batch is cut into the schedule's micro-batches: the one rule the executor (inputs,
// targets, message sizes, dropout's sample index), the sequential reference and sluice_evaluate's loss sum follow,
// so a pipelined call and its sequential reference cut the same rows and stay equal bit for bit.
//
// A call passes b rows (b >= M, the micro-batch count; any b, not only multiples of M): micro-batch i gets
// floor(b/M) + 1 rows for i < b mod M, else floor(b/M). With b a multiple of M every micro-batch has b/M rows, as
// before uneven batches were allowed. (Prediction cuts its batches by another rule, prediction_passes.h.)
#pragma once

#include <cstdint>

namespace sluice::runtime {

struct MicrobatchRows {
  int64_t first = 0;  // the micro-batch's first row in the call's batch
  int64_t count = 0;  // its rows
};

// Micro-batch `index` (0 <= index < microbatches) of a batch of `rows` >= microbatches rows.
MicrobatchRows microbatch_rows(int64_t rows, int microbatches, int index);

}  // namespace sluice::runtime
