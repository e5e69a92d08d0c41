// The one wording for "this array holds a value that is not finite", shared by every place that takes numbers in
// (API arrays, checkpoint and data files, callbacks' outputs, the step's own data): a NaN or Inf let in is stored or
// propagated as if it were a number, so each entry point refuses it and names where it is.
#pragma once

#include <cstdint>
#include <string>

namespace sluice {

// "nan", "inf" or "-inf" for a non-finite value (its text in messages).
std::string non_finite_text(float value);

// The index of the first NaN or Inf among `count` values, or -1 (also for NULL).
int64_t first_non_finite_index(const float* data, int64_t count);

// "" when every value of `data` ([rows][features], host memory) is finite; else a message naming the first one:
// "non-finite value (nan) in the inputs of sample 3 (feature 1)", `what` naming the array. NULL is "".
std::string first_non_finite(const float* data, int64_t rows, int64_t features, const char* what);

// The same for a flat array: "non-finite value (inf) in <what> at index 7". NULL is "".
std::string first_non_finite(const float* data, int64_t count, const std::string& what);

}  // namespace sluice
