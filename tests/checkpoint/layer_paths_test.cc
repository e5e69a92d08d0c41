#include "checkpoint/layer_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;

TEST(LayerPathsTest, BuildsTheDocumentedPaths) {
  EXPECT_EQ(model_path(3, "weight"), "/model/layer_0003/weight");
  EXPECT_EQ(optimizer_path(12, "bias", "exp_avg_sq"), "/optimizer/layer_0012/bias/exp_avg_sq");
  EXPECT_EQ(accumulation_path(0, "weight"), "/accumulation/layer_0000/weight");
  EXPECT_EQ(accumulation_path(3, "fc1.weight", 1), "/accumulation/layer_0003/fc1.weight/replica_1");
  EXPECT_EQ(layer_index_of(accumulation_path(12, "bias", 0)), 12);
  EXPECT_THROW(accumulation_path(0, "weight", -1), Error);
  EXPECT_EQ(train_path("step"), "/train/step");
  EXPECT_EQ(layer_group_name(12345), "layer_12345");
}

TEST(LayerPathsTest, FindsTheGlobalLayerIndex) {
  EXPECT_EQ(layer_index_of("/model/layer_0042/weight"), 42);
  EXPECT_EQ(layer_index_of("/optimizer/layer_0007/w/exp_avg"), 7);
  EXPECT_EQ(layer_index_of("/train/step"), std::nullopt);
  EXPECT_EQ(layer_index_of("/model/block_0001/weight"), std::nullopt);
  EXPECT_EQ(layer_index_of("/model/layer_/weight"), std::nullopt);
}

void expect_invalid(const std::string& path, const std::string& reason) {
  try {
    validate_entry_path(path);
    ADD_FAILURE() << "accepted " << path;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("'" + path + "'"));
    EXPECT_THAT(error.what(), HasSubstr(reason));
  }
}

TEST(LayerPathsTest, RejectsPathsOutsideTheLayout) {
  expect_invalid("/model/layer_0001", "at least");
  expect_invalid("/weights/layer_0001/w", "first component");
  expect_invalid("/model/stage_1/w", "layer_NNNN");
  expect_invalid("/model/layer_0001/we ight", "we ight");
  expect_invalid("/model/layer_0001//w", "component ''");
  expect_invalid("model/layer_0001/w", "at least");
  EXPECT_NO_THROW(validate_entry_path("/accumulation/layer_0001/w.grad-1"));
}

TEST(LayerPathsTest, RejectsNegativeLayersAndBadNames) {
  EXPECT_THROW(layer_group_name(-1), Error);
  EXPECT_THROW(model_path(0, "a/b"), Error);
  EXPECT_THROW(train_path(""), Error);
}

}  // namespace
}  // namespace sluice::checkpoint
