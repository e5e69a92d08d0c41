#include "checkpoint/directory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class DirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ckpt_dir_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void touch(const std::string& name) const { std::ofstream(dir_ + "/" + name) << "x"; }
  std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (const auto& entry : fs::directory_iterator(dir_)) result.push_back(entry.path().filename().string());
    std::sort(result.begin(), result.end());
    return result;
  }

  std::string dir_;
};

TEST_F(DirectoryTest, NamesCheckpointsByStep) {
  EXPECT_EQ(checkpoint_file_name(10), "ckpt_00000010.h5");
  EXPECT_EQ(checkpoint_file_name(123456789), "ckpt_123456789.h5");
  EXPECT_EQ(step_of_checkpoint_name("ckpt_00000010.h5"), 10);
  EXPECT_EQ(step_of_checkpoint_name("ckpt_00000010.h5.tmp-77"), std::nullopt);
  EXPECT_EQ(step_of_checkpoint_name("ckpt_.h5"), std::nullopt);
  EXPECT_EQ(step_of_temporary_name("ckpt_00000010.h5.tmp-77"), 10);
  EXPECT_EQ(step_of_temporary_name("ckpt_00000010.h5.tmp-"), std::nullopt);
  EXPECT_EQ(temporary_path("/d/ckpt_00000010.h5", "77"), "/d/ckpt_00000010.h5.tmp-77");
  EXPECT_THROW(checkpoint_file_name(-1), Error);
}

TEST_F(DirectoryTest, LatestIgnoresTemporariesAndOtherFiles) {
  touch("ckpt_00000009.h5");
  touch("ckpt_00000010.h5");
  touch("ckpt_00000011.h5.tmp-1234");  // a save killed before its rename
  touch("notes.txt");
  EXPECT_EQ(latest_in_dir(dir_), dir_ + "/ckpt_00000010.h5");
  EXPECT_EQ(resolve_checkpoint_path(dir_), dir_ + "/ckpt_00000010.h5");
  EXPECT_EQ(resolve_checkpoint_path(dir_ + "/ckpt_00000009.h5"), dir_ + "/ckpt_00000009.h5");
}

TEST_F(DirectoryTest, LatestComparesStepsNotNames) {
  touch("ckpt_99999999.h5");
  touch("ckpt_100000000.h5");  // sorts before the other by name
  EXPECT_EQ(latest_in_dir(dir_), dir_ + "/ckpt_100000000.h5");
}

TEST_F(DirectoryTest, LatestInDirectoryWithoutCheckpointThrows) {
  touch("ckpt_00000011.h5.tmp-1234");
  try {
    latest_in_dir(dir_);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
    EXPECT_THAT(error.what(), HasSubstr(dir_));
  }
  EXPECT_THROW(latest_in_dir(dir_ + "/missing"), Error);
}

TEST_F(DirectoryTest, RotateKeepsTheLastKAndRunningSaves) {
  for (int step : {10, 20, 30, 40, 50}) touch(checkpoint_file_name(step));
  touch("ckpt_00000030.h5.tmp-111");  // stale: step 30 is complete
  touch("ckpt_00000060.h5.tmp-222");  // a save in progress
  touch("notes.txt");
  touch("ckpt_00000020.h5.tmp-999");  // stale, but another writer's: never ours to delete
  rotate(dir_, 2, "111");
  EXPECT_EQ(names(), std::vector<std::string>(
                         {"ckpt_00000020.h5.tmp-999", "ckpt_00000040.h5", "ckpt_00000050.h5", "ckpt_00000060.h5.tmp-222",
                          "notes.txt"}));
  rotate(dir_, 5, "111");  // fewer than K: nothing to delete
  EXPECT_EQ(names().size(), 5u);
}

TEST_F(DirectoryTest, RotateRejectsKeepBelowOne) {
  touch(checkpoint_file_name(1));
  try {
    rotate(dir_, 0, "111");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("keep"));
  }
  EXPECT_EQ(names().size(), 1u);
}

}  // namespace
}  // namespace sluice::checkpoint
