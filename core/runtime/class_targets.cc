#include "core/runtime/class_targets.h"

#include <cmath>
#include <sstream>
#include <vector>

namespace sluice::runtime {
namespace {

// The spatial coordinates of point p (C order, the last extent fastest), as "[2, 5]".
std::string point_text(int64_t p, const config::SampleShape& shape) {
  std::vector<int64_t> coordinates(shape.size() - 1);
  for (size_t d = shape.size() - 1; d >= 1; --d) {
    coordinates[d - 1] = p % shape[d];
    p /= shape[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < coordinates.size(); ++d) text += (d ? ", " : "") + std::to_string(coordinates[d]);
  return text + "]";
}

std::string value_text(float v) {
  if (std::isnan(v)) return "nan";
  std::ostringstream out;
  out << v;
  return out.str();
}

// The problem with one point (its channels `stride` apart), or "".
std::string point_problem(const float* t, int64_t channels, int64_t stride) {
  double mass = 0.0;
  for (int64_t c = 0; c < channels; ++c) {
    const float v = t[c * stride];
    if (!(v >= 0.0f && v <= 1.0f)) return "channel " + std::to_string(c) + " holds " + value_text(v);
    mass += v;
  }
  if (std::fabs(mass - 1.0) > kClassMassTolerance) {
    return "they sum to " + value_text(static_cast<float>(mass)) +
           " (a class index k is given one-hot: 1 in channel k, 0 in the others)";
  }
  return "";
}

}  // namespace

std::string first_invalid_class_target(const float* targets, int64_t rows, const config::SampleShape& shape) {
  if (targets == nullptr || !config::is_field(shape)) return "";
  const int64_t channels = config::field_channels(shape);
  const int64_t points = config::field_points(shape);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t p = 0; p < points; ++p) {
      const std::string problem = point_problem(targets + r * channels * points + p, channels, points);
      if (!problem.empty()) {
        return "targets of sample " + std::to_string(r) + " at point " + point_text(p, shape) +
               " are not class probabilities over the " + std::to_string(channels) + " channels (loss: " +
               "cross_entropy): " + problem;
      }
    }
  }
  return "";
}

}  // namespace sluice::runtime
