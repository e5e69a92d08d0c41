// The argument checks every DataSource::batch makes, in one wording.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/error.h"

namespace sluice::data {

// Throws Error(kInvalidArgument) naming `source` ("SyntheticData::batch") for a negative step, first row or row
// count, or null buffers when rows are asked for; false when there is nothing to fill (rows == 0).
inline bool check_batch_arguments(const char* source, int64_t step, int64_t first_row, int64_t rows,
                                  const float* inputs, const float* targets) {
  if (step < 0 || first_row < 0 || rows < 0) {
    throw Error(ErrorCode::kInvalidArgument, std::string(source) + ": step, first_row and rows must be >= 0, got " +
                                                 std::to_string(step) + ", " + std::to_string(first_row) + ", " +
                                                 std::to_string(rows));
  }
  if (rows == 0) return false;
  if (inputs == nullptr || targets == nullptr) {
    throw Error(ErrorCode::kInvalidArgument, std::string(source) + ": inputs and targets must not be null");
  }
  return true;
}

}  // namespace sluice::data
