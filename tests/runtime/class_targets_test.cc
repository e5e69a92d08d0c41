// cross_entropy's targets on a field (core/runtime/class_targets.h): one-hot and soft labels pass; a value outside
// [0, 1], a NaN, or a point whose channels do not sum to 1 (a class index written into one channel) is refused,
// naming the sample, the point's coordinates and the channel.
#include "core/runtime/class_targets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sluice::runtime {
namespace {

const config::SampleShape kShape = {3, 2, 4};  // 3 classes on a 2 x 4 grid
constexpr int64_t kPoints = 8, kFeatures = 24, kRows = 2;

// One-hot targets: class (r + p) % 3 at point p of sample r.
std::vector<float> one_hot() {
  std::vector<float> t(kRows * kFeatures, 0.0f);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t p = 0; p < kPoints; ++p) t[r * kFeatures + ((r + p) % 3) * kPoints + p] = 1.0f;
  }
  return t;
}

std::string problem_of(const std::vector<float>& t) { return first_invalid_class_target(t.data(), kRows, kShape); }

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(ClassTargets, OneHotAndSoftLabelsPass) {
  EXPECT_EQ(problem_of(one_hot()), "");
  std::vector<float> soft(kRows * kFeatures);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t p = 0; p < kPoints; ++p) {
      soft[r * kFeatures + p] = 0.1f;
      soft[r * kFeatures + kPoints + p] = 0.2f;
      soft[r * kFeatures + 2 * kPoints + p] = 0.7f;
    }
  }
  EXPECT_EQ(problem_of(soft), "");
  EXPECT_EQ(first_invalid_class_target(nullptr, kRows, kShape), "");
  EXPECT_EQ(first_invalid_class_target(soft.data(), kRows, config::SampleShape{24}), "");  // rows: not checked here
}

TEST(ClassTargets, AClassIndexInOneChannelIsRefusedNamingSampleAndPoint) {
  std::vector<float> t = one_hot();
  // Sample 1, point (1, 2) = p 6: class 2 written as the value 2 in channel 0 instead of one-hot.
  for (int64_t c = 0; c < 3; ++c) t[kFeatures + c * kPoints + 6] = 0.0f;
  t[kFeatures + 6] = 2.0f;
  const std::string problem = problem_of(t);
  expect_contains(problem, "targets of sample 1 at point [1, 2]");
  expect_contains(problem, "over the 3 channels");
  expect_contains(problem, "channel 0 holds 2");
}

TEST(ClassTargets, ZerosNegativesAndNaNAreRefused) {
  std::vector<float> t = one_hot();
  for (int64_t c = 0; c < 3; ++c) t[c * kPoints + 5] = 0.0f;  // sample 0, point (1, 1): no class at all
  expect_contains(problem_of(t), "sample 0 at point [1, 1]");
  expect_contains(problem_of(t), "sum to 0");
  t = one_hot();
  t[kFeatures + 2 * kPoints + 3] = -0.5f;
  expect_contains(problem_of(t), "sample 1 at point [0, 3]");
  expect_contains(problem_of(t), "channel 2 holds -0.5");
  t = one_hot();
  t[kPoints + 7] = std::nanf("");
  expect_contains(problem_of(t), "sample 0 at point [1, 3]");
  expect_contains(problem_of(t), "channel 1 holds nan");
}

TEST(ClassTargets, PointsIn1DAnd3DAreNamedByTheirCoordinates) {
  std::vector<float> line(5 * 2, 0.0f);  // shape [2, 5]
  for (int64_t p = 0; p < 5; ++p) line[p] = 1.0f;
  line[4] = 0.5f;
  expect_contains(first_invalid_class_target(line.data(), 1, {2, 5}), "point [4]");
  std::vector<float> cube(2 * 24, 0.0f);  // shape [2, 2, 3, 4]: point (1, 2, 3) is p 23
  for (int64_t p = 0; p < 24; ++p) cube[p] = 1.0f;
  cube[23] = 0.0f;
  expect_contains(first_invalid_class_target(cube.data(), 1, {2, 2, 3, 4}), "point [1, 2, 3]");
}

}  // namespace
}  // namespace sluice::runtime
