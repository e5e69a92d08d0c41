#include "core/data/synthetic_field_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "core/common/error.h"
#include "tests/data/block_test_support.h"

namespace sluice::data {
namespace {

using test_blocks::Batch;
using test_blocks::fetch;

const config::SampleShape kIn{3, 6, 7};  // 7: lines that are not whole Philox counters
const config::SampleShape kOut{4, 6, 7};

TEST(SyntheticFieldData, SlicesAndFreshInstancesAgreeWithTheWholeBatch) {
  for (TargetKind kind : {TargetKind::kRegression, TargetKind::kOneHot}) {
    SyntheticFieldData source(42, kIn, kOut, kind);
    const Batch whole = fetch(source, 3, 0, 8);
    SyntheticFieldData restarted(42, kIn, kOut, kind);
    const Batch slice = fetch(restarted, 3, 5, 2);
    const int64_t in = source.input_features(), out = source.target_features();
    EXPECT_EQ(in, 3 * 42);
    EXPECT_EQ(out, 4 * 42);
    for (int64_t i = 0; i < 2 * in; ++i) EXPECT_EQ(slice.inputs[i], whole.inputs[5 * in + i]) << i;
    for (int64_t i = 0; i < 2 * out; ++i) EXPECT_EQ(slice.targets[i], whole.targets[5 * out + i]) << i;
  }
}

TEST(SyntheticFieldData, InputsAreUniformAndTargetsSmoothAndVarying) {
  SyntheticFieldData source(1, kIn, kOut, TargetKind::kRegression);
  const Batch batch = fetch(source, 0, 0, 16);
  double sum = 0.0, targets_sq = 0.0;
  for (float v : batch.inputs) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LE(v, 1.0f);
    sum += v;
  }
  EXPECT_LT(std::abs(sum / static_cast<double>(batch.inputs.size())), 0.05);
  for (float v : batch.targets) {
    EXPECT_LE(std::abs(v), 1.0f);
    targets_sq += static_cast<double>(v) * v;
  }
  EXPECT_GT(targets_sq / static_cast<double>(batch.targets.size()), 0.1) << "targets should vary";
}

TEST(SyntheticFieldData, StepsRowsAndSeedsGiveDifferentData) {
  SyntheticFieldData source(7, kIn, kOut, TargetKind::kRegression);
  SyntheticFieldData other_seed(8, kIn, kOut, TargetKind::kRegression);
  const Batch base = fetch(source, 0, 0, 1);
  EXPECT_NE(base.inputs, fetch(source, 1, 0, 1).inputs);
  EXPECT_NE(base.inputs, fetch(source, 0, 1, 1).inputs);
  EXPECT_NE(base.inputs, fetch(other_seed, 0, 0, 1).inputs);
  EXPECT_NE(base.targets, fetch(other_seed, 0, 0, 1).targets);
  // The channels of one point are not copies of each other.
  EXPECT_NE(base.inputs[0], base.inputs[42]);
}

TEST(SyntheticFieldData, OneHotTargetsHaveOneClassPerPointAndUseEveryClass) {
  SyntheticFieldData source(1, kIn, kOut, TargetKind::kOneHot);
  const Batch batch = fetch(source, 0, 0, 4);
  std::set<int> classes;
  for (int r = 0; r < 4; ++r) {
    for (int p = 0; p < 42; ++p) {
      float sum = 0.0f;
      for (int c = 0; c < 4; ++c) {
        const float v = batch.targets[(r * 4 + c) * 42 + p];
        EXPECT_TRUE(v == 0.0f || v == 1.0f) << v;
        sum += v;
        if (v == 1.0f) classes.insert(c);
      }
      EXPECT_EQ(sum, 1.0f) << "sample " << r << " point " << p;
    }
  }
  EXPECT_EQ(classes.size(), 4u);
}

// A block of a field far too large for SyntheticData's dense map ([C·ΠD][C·ΠD] floats, here 2^49) needs only its own
// values: nothing is sized by the whole field.
TEST(SyntheticFieldData, ABlockOfAHugeFieldHoldsOnlyTheBlock) {
  const config::SampleShape in{2, 4096, 4096}, out{2, 4096, 4096};
  const config::DomainBox box{{4000, 96}, {8, 16}};
  SyntheticFieldData block(3, in, out, TargetKind::kRegression, box, box);
  EXPECT_EQ(block.input_features(), 2 * 8 * 16);
  EXPECT_EQ(block.target_features(), 2 * 8 * 16);
  const Batch batch = fetch(block, 5, 9, 2);
  EXPECT_NE(batch.targets[0], batch.targets[1]);
}

TEST(SyntheticFieldData, RejectsBadArguments) {
  EXPECT_THROW(SyntheticFieldData(1, {12}, kOut, TargetKind::kRegression), Error);
  EXPECT_THROW(SyntheticFieldData(1, kIn, {4, 6, 7, 1}, TargetKind::kRegression), Error);
  EXPECT_THROW(SyntheticFieldData(1, kIn, {4, -1, 7}, TargetKind::kRegression), Error);
  EXPECT_THROW(SyntheticFieldData(1, kIn, kOut, TargetKind::kRegression, {{0, 5}, {6, 3}}), Error);
  SyntheticFieldData source(1, kIn, kOut, TargetKind::kRegression);
  std::vector<float> x(3 * 42), y(4 * 42);
  EXPECT_THROW(source.batch(-1, 0, 1, x.data(), y.data()), Error);
  EXPECT_THROW(source.batch(0, 0, 1, nullptr, y.data()), Error);
  EXPECT_NO_THROW(source.batch(0, 0, 0, nullptr, nullptr));
}

}  // namespace
}  // namespace sluice::data
