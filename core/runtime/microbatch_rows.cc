#include "core/runtime/microbatch_rows.h"

#include <string>

#include "core/common/error.h"

namespace sluice::runtime {

MicrobatchRows microbatch_rows(int64_t rows, int microbatches, int index) {
  if (microbatches < 1 || rows < microbatches || index < 0 || index >= microbatches) {
    throw Error(ErrorCode::kInternal, "micro-batch " + std::to_string(index) + " of " + std::to_string(microbatches) +
                                          " in a batch of " + std::to_string(rows) + " rows");
  }
  const int64_t base = rows / microbatches;
  const int64_t larger = rows % microbatches;  // the first `larger` micro-batches get one row more
  const int64_t i = index;
  return MicrobatchRows{i * base + (i < larger ? i : larger), base + (i < larger ? 1 : 0)};
}

}  // namespace sluice::runtime
