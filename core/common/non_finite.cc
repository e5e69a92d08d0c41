#include "core/common/non_finite.h"

#include <cmath>

namespace sluice {

std::string non_finite_text(float value) { return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf"; }

int64_t first_non_finite_index(const float* data, int64_t count) {
  if (data == nullptr) return -1;
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(data[i])) return i;
  }
  return -1;
}

std::string first_non_finite(const float* data, int64_t rows, int64_t features, const char* what) {
  const int64_t i = features > 0 ? first_non_finite_index(data, rows * features) : -1;
  if (i < 0) return "";
  return "non-finite value (" + non_finite_text(data[i]) + ") in the " + what + " of sample " +
         std::to_string(i / features) + " (feature " + std::to_string(i % features) + ")";
}

std::string first_non_finite(const float* data, int64_t count, const std::string& what) {
  const int64_t i = first_non_finite_index(data, count);
  if (i < 0) return "";
  return "non-finite value (" + non_finite_text(data[i]) + ") in " + what + " at index " + std::to_string(i);
}

}  // namespace sluice
