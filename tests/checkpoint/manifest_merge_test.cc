// merge_manifests (checkpoint/manifest_merge.h): a dataset several ranks own by blocks (the submitted samples on a
// pipeline.domain split) is one dataset when the blocks tile it exactly; overlapping blocks, a gap, or a path two
// ranks contribute whole are refused naming the path and the ranks.
#include "checkpoint/manifest_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

const char* const kPath = "/samples/inputs";

// One rank's manifest bytes holding its box of a [3, 2, 4, 6] dataset (or the whole dataset when offset is empty).
std::string block_of(const std::vector<int64_t>& offset, const std::vector<int64_t>& extent) {
  ManifestItem item{kPath, {3, 2, 4, 6}, 0};
  if (!offset.empty()) item.boxes.push_back({0, offset, extent});
  return serialize_manifest({item});
}

std::string whole(const std::string& path) { return serialize_manifest({ManifestItem{path, {4}, 7}}); }

void expect_refused(const std::vector<std::string>& per_rank, const std::vector<std::string>& parts) {
  try {
    merge_manifests(per_rank);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    for (const std::string& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// Rank 0 contributes /model/a whole; ranks 0..3 a 2 x 2 split of the spatial dims (uneven along the last), and
// rank 4 nothing.
TEST(ManifestMergeTest, BlocksThatTileTheDatasetAreOneItem) {
  std::string rank0 = block_of({0, 0, 0, 0}, {3, 2, 2, 4});
  rank0 += whole("/model/a");
  const std::vector<std::string> per_rank = {rank0, block_of({0, 0, 0, 4}, {3, 2, 2, 2}),
                                             block_of({0, 0, 2, 0}, {3, 2, 2, 4}),
                                             block_of({0, 0, 2, 4}, {3, 2, 2, 2}), ""};
  const std::vector<ManifestItem> all = merge_manifests(per_rank);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].path, "/model/a");
  EXPECT_EQ(all[0].owner_rank, 0);
  EXPECT_TRUE(all[0].boxes.empty());
  EXPECT_EQ(all[1].path, kPath);
  EXPECT_EQ(all[1].owner_rank, kBlockOwners);
  EXPECT_EQ(all[1].dims, (std::vector<int64_t>{3, 2, 4, 6}));
  ASSERT_EQ(all[1].boxes.size(), 4u);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(all[1].boxes[static_cast<size_t>(r)].rank, r);
  EXPECT_EQ(all[1].boxes[3].offset, (std::vector<int64_t>{0, 0, 2, 4}));
  EXPECT_EQ(all[1].boxes[3].extent, (std::vector<int64_t>{3, 2, 2, 2}));
}

TEST(ManifestMergeTest, OverlappingBlocksAreRefusedNamingPathAndRanks) {
  expect_refused({block_of({0, 0, 0, 0}, {3, 2, 4, 4}), block_of({0, 0, 0, 3}, {3, 2, 4, 3})},
                 {kPath, "rank 0 [0:3, 0:2, 0:4, 0:4]", "rank 1 [0:3, 0:2, 0:4, 3:6]", "overlap"});
}

TEST(ManifestMergeTest, BlocksThatLeaveAGapAreRefusedNamingPathAndRanks) {
  expect_refused({block_of({0, 0, 0, 0}, {3, 2, 4, 3}), "", block_of({0, 0, 0, 4}, {3, 2, 4, 2})},
                 {kPath, "ranks 0 and 2", "leave a gap", "120 of its 144 values"});
}

TEST(ManifestMergeTest, ABlockOutsideTheDatasetIsRefused) {
  expect_refused({block_of({0, 0, 0, 0}, {3, 2, 4, 6}), block_of({0, 0, 0, 5}, {3, 2, 4, 2})},
                 {kPath, "rank 1", "reaches outside"});
}

TEST(ManifestMergeTest, AWholeDatasetAndABlockOfItAreRefused) {
  expect_refused({block_of({}, {}), block_of({0, 0, 0, 0}, {3, 2, 4, 6})}, {kPath, "ranks 0 and 1"});
}

TEST(ManifestMergeTest, APathTwoRanksContributeWholeIsStillRefused) {
  expect_refused({whole("/model/a"), whole("/model/a")}, {"/model/a", "both rank 0 and rank 1"});
}

}  // namespace
}  // namespace sluice::checkpoint
