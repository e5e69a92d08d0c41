#include "core/data/synthetic_data.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/common/error.h"

namespace sluice::data {
namespace {

constexpr int64_t kInputs = 13;  // not a multiple of 4: exercises the partial Philox block
constexpr int64_t kTargets = 5;
constexpr int64_t kBatch = 64;

struct Batch {
  std::vector<float> inputs;
  std::vector<float> targets;
};

Batch fetch(SyntheticData& source, int64_t step, int64_t first_row, int64_t rows) {
  Batch batch{std::vector<float>(rows * kInputs), std::vector<float>(rows * kTargets)};
  source.batch(step, first_row, rows, batch.inputs.data(), batch.targets.data());
  return batch;
}

TEST(SyntheticData, SlicesAgreeWithTheWholeBatch) {
  for (TargetKind kind : {TargetKind::kRegression, TargetKind::kOneHot}) {
    SyntheticData source(42, kInputs, kTargets, kind);
    const Batch whole = fetch(source, 3, 0, kBatch);
    // Uneven slices, as different ranks / micro-batches would ask for them.
    for (const auto& [first, rows] :
         std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 7}, {8, 24}, {32, 32}, {63, 1}}) {
      const Batch slice = fetch(source, 3, first, rows);
      for (int64_t i = 0; i < rows * kInputs; ++i) {
        ASSERT_EQ(slice.inputs[i], whole.inputs[first * kInputs + i]) << "row " << first + i / kInputs;
      }
      for (int64_t i = 0; i < rows * kTargets; ++i) {
        // Bit-identical, not just close: replicas and restarted runs must see exactly the same targets.
        ASSERT_EQ(slice.targets[i], whole.targets[first * kTargets + i]) << "row " << first + i / kTargets;
      }
    }
  }
}

TEST(SyntheticData, SameSeedStepAndRowGiveTheSameDataInAFreshInstance) {
  SyntheticData first(7, kInputs, kTargets, TargetKind::kRegression);
  SyntheticData restarted(7, kInputs, kTargets, TargetKind::kRegression);
  fetch(first, 0, 0, kBatch);  // advancing one instance must not change what a later step returns
  const Batch a = fetch(first, 5, 10, 20);
  const Batch b = fetch(restarted, 5, 10, 20);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.targets, b.targets);
}

TEST(SyntheticData, StepsRowsAndSeedsGiveDifferentData) {
  SyntheticData source(7, kInputs, kTargets, TargetKind::kRegression);
  SyntheticData other_seed(8, kInputs, kTargets, TargetKind::kRegression);
  const Batch step0 = fetch(source, 0, 0, 2);
  EXPECT_NE(step0.inputs, fetch(source, 1, 0, 2).inputs);
  EXPECT_NE(std::vector<float>(step0.inputs.begin(), step0.inputs.begin() + kInputs),
            std::vector<float>(step0.inputs.begin() + kInputs, step0.inputs.end()));
  const Batch seeded = fetch(other_seed, 0, 0, 2);
  EXPECT_NE(step0.inputs, seeded.inputs);
  EXPECT_NE(step0.targets, seeded.targets);
}

TEST(SyntheticData, InputsAreUniformInMinusOneToOne) {
  SyntheticData source(1, kInputs, kTargets, TargetKind::kRegression);
  const Batch batch = fetch(source, 0, 0, 1000);
  double sum = 0.0;
  int negative = 0;
  for (float x : batch.inputs) {
    ASSERT_GE(x, -1.0f);
    ASSERT_LE(x, 1.0f);
    sum += x;
    negative += x < 0.0f;
  }
  const double count = static_cast<double>(batch.inputs.size());
  EXPECT_NEAR(sum / count, 0.0, 0.02);  // 13000 samples: standard error of the mean ~0.005
  EXPECT_NEAR(negative / count, 0.5, 0.03);
}

TEST(SyntheticData, RegressionTargetsAreBoundedAndVary) {
  SyntheticData source(1, kInputs, kTargets, TargetKind::kRegression);
  const Batch batch = fetch(source, 0, 0, 256);
  std::set<float> distinct;
  for (float t : batch.targets) {
    ASSERT_GE(t, -1.0f);
    ASSERT_LE(t, 1.0f);
    distinct.insert(t);
  }
  EXPECT_GT(distinct.size(), batch.targets.size() / 2);
}

TEST(SyntheticData, OneHotTargetsHaveOneClassPerRowAndUseSeveralClasses) {
  SyntheticData source(1, kInputs, kTargets, TargetKind::kOneHot);
  const Batch batch = fetch(source, 0, 0, 256);
  std::set<int64_t> classes;
  for (int64_t r = 0; r < 256; ++r) {
    int ones = 0;
    for (int64_t j = 0; j < kTargets; ++j) {
      const float t = batch.targets[r * kTargets + j];
      ASSERT_TRUE(t == 0.0f || t == 1.0f) << t;
      if (t == 1.0f) {
        ++ones;
        classes.insert(j);
      }
    }
    ASSERT_EQ(ones, 1) << "row " << r;
  }
  EXPECT_GE(classes.size(), 3u);
}

TEST(SyntheticData, RejectsBadArguments) {
  EXPECT_THROW(SyntheticData(1, 0, kTargets, TargetKind::kRegression), Error);
  SyntheticData source(1, kInputs, kTargets, TargetKind::kRegression);
  std::vector<float> inputs(kInputs), targets(kTargets);
  try {
    source.batch(0, -1, 1, inputs.data(), targets.data());
    ADD_FAILURE() << "negative first_row accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_THROW(source.batch(0, 0, 1, nullptr, targets.data()), Error);
}

}  // namespace
}  // namespace sluice::data
