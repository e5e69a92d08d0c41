#include "core/common/non_finite.h"

#include <cmath>

namespace sluice {

std::string non_finite_text(float value) { return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf"; }

std::string first_non_finite(const float* data, int64_t rows, int64_t features, const char* what) {
  if (data == nullptr) return "";
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < features; ++f) {
      const float v = data[r * features + f];
      if (!std::isfinite(v)) {
        return "non-finite value (" + non_finite_text(v) + ") in the " + what + " of sample " + std::to_string(r) +
               " (feature " + std::to_string(f) + ")";
      }
    }
  }
  return "";
}

std::string first_non_finite(const float* data, int64_t count, const std::string& what) {
  if (data == nullptr) return "";
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(data[i])) {
      return "non-finite value (" + non_finite_text(data[i]) + ") in " + what + " at index " + std::to_string(i);
    }
  }
  return "";
}

}  // namespace sluice
