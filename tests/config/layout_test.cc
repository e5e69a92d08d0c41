#include "core/config/layout.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>
#include <utility>

#include "core/common/error.h"

namespace sluice::config {
namespace {

Config config_with(int stages, int microbatches, int64_t batch, int data_parallel = 0) {
  Config config;
  config.pipeline.stages = stages;
  config.pipeline.microbatches = microbatches;
  config.pipeline.data_parallel = data_parallel;
  config.data.batch = batch;
  return config;
}

std::string layout_error(const Config& config, int world, int rank = 0) {
  try {
    make_layout(config, world, rank);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected make_layout(world=" << world << ") to fail";
  return "";
}

TEST(Layout, PipelineRanksOfAReplicaAreConsecutive) {
  const Config config = config_with(4, 2, 16);
  std::set<std::pair<int, int>> seen;
  for (int rank = 0; rank < 8; ++rank) {
    const Layout layout = make_layout(config, 8, rank);
    EXPECT_EQ(layout.world, 8);
    EXPECT_EQ(layout.stages, 4);
    EXPECT_EQ(layout.data_parallel, 2);
    EXPECT_EQ(layout.rank, rank);
    EXPECT_EQ(layout.replica, rank < 4 ? 0 : 1);
    EXPECT_EQ(layout.stage_rank, rank < 4 ? rank : rank - 4);
    seen.insert({layout.replica, layout.stage_rank});
  }
  EXPECT_EQ(seen.size(), 8u);  // every (replica, stage) is owned by exactly one rank
}

TEST(Layout, StagesAcrossNodesMakesAStagesReplicasConsecutive) {
  const Config config = config_with(4, 2, 16);
  std::set<std::pair<int, int>> seen;
  for (int rank = 0; rank < 8; ++rank) {
    const Layout layout = make_layout(config, 8, rank, RankOrder::kStagesAcrossNodes);
    EXPECT_EQ(layout.replica, rank % 2);
    EXPECT_EQ(layout.stage_rank, rank / 2);
    EXPECT_EQ(layout.order, RankOrder::kStagesAcrossNodes);
    EXPECT_EQ(rank_at(layout.order, layout.stage_rank, layout.replica, 4, 2), rank);
    seen.insert({layout.replica, layout.stage_rank});
  }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(Layout, AnUnresolvedOrderIsRefusedAndTheCheckingFormUsesTheConfigsOrder) {
  Config config = config_with(2, 1, 4);
  EXPECT_THROW(make_layout(config, 4, 0, RankOrder::kAuto), Error);
  EXPECT_EQ(make_layout(config, 4, 1).order, RankOrder::kStagesWithinNode);  // auto: checks only
  config.pipeline.rank_order = RankOrder::kStagesAcrossNodes;
  EXPECT_EQ(make_layout(config, 4, 1).stage_rank, 0);  // rank 1 is stage 0's second replica
}

TEST(Layout, SingleStageIsPureDataParallel) {
  const Layout layout = make_layout(config_with(1, 1, 6), 3, 2);
  EXPECT_EQ(layout.data_parallel, 3);
  EXPECT_EQ(layout.stage_rank, 0);
  EXPECT_EQ(layout.replica, 2);
}

TEST(Layout, WorldNotAMultipleOfStagesSaysWhichSizesWork) {
  EXPECT_EQ(layout_error(config_with(4, 1, 8), 6),
            "config: pipeline.stages is 4 but the MPI world has 6 ranks, which is not a multiple of it; "
            "world sizes that work: 4, 8, 12, 16, ...");
}

TEST(Layout, ExplicitDataParallelMustMatchTheWorld) {
  EXPECT_NO_THROW(make_layout(config_with(2, 1, 8, 2), 4, 0));
  const std::string message = layout_error(config_with(2, 1, 8, 3), 4);
  EXPECT_NE(message.find("pipeline.data_parallel is 3"), std::string::npos) << message;
  EXPECT_NE(message.find("needs 6 ranks, but the MPI world has 4"), std::string::npos) << message;
}

TEST(Layout, BatchMustSplitIntoReplicasOfAtLeastOneRowPerMicrobatch) {
  // 2 replicas x 8 microbatches: replica batches of at least 8 rows; the micro-batches may differ by one row.
  EXPECT_NO_THROW(make_layout(config_with(4, 8, 40), 8, 0));  // 20 rows per replica: 4 x 3 rows, 4 x 2
  const std::string odd = layout_error(config_with(4, 8, 41), 8);
  EXPECT_NE(odd.find("data.batch 41 does not split into data_parallel = 2 equal replica batches of at least "
                     "pipeline.microbatches = 8 rows"),
            std::string::npos)
      << odd;
  EXPECT_NE(odd.find("nearest valid batch sizes: 40 or 42"), std::string::npos) << odd;
  EXPECT_NE(layout_error(config_with(4, 8, 10), 8).find("nearest valid batch sizes: 16"), std::string::npos);
  EXPECT_NO_THROW(make_layout(config_with(4, 8, 0), 8, 0));  // not configured (C API): each call passes its own
}

// The parser ties a device list to pipeline.stages; a Config edited in code is checked again here.
TEST(Layout, DeviceListMustHaveOneEntryPerStageOrOneForAll) {
  Config config = config_with(4, 2, 16);
  config.devices = {DeviceKind::kCuda};
  EXPECT_EQ(make_layout(config, 4, 0).stages, 4);
  config.devices = {DeviceKind::kCuda, DeviceKind::kCuda, DeviceKind::kCpu, DeviceKind::kCpu};
  EXPECT_EQ(make_layout(config, 8, 5).stage_rank, 1);
  config.devices = {DeviceKind::kCuda, DeviceKind::kCpu};
  EXPECT_EQ(layout_error(config, 4),
            "config: device lists 2 devices but pipeline.stages is 4: give one device per stage, or one for all");
  config.devices = {};
  EXPECT_NE(layout_error(config, 4).find("device lists 0 devices"), std::string::npos);
}

TEST(Layout, RankOutsideTheWorldIsAnInvalidArgument) {
  try {
    make_layout(config_with(2, 1, 2), 2, 2);
    ADD_FAILURE() << "rank 2 of 2 accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  }
}

// With stages near INT_MAX the suggested world sizes and the rank counts in messages used to wrap negative.
TEST(Layout, MessagesAboutHugeStageCountsDoNotOverflow) {
  EXPECT_EQ(layout_error(config_with(2147483647, 1, 8), 1),
            "config: pipeline.stages is 2147483647 but the MPI world has 1 ranks, which is not a multiple of it; world "
            "sizes that work: 2147483647, 4294967294, 6442450941, 8589934588, ...");
  EXPECT_NE(layout_error(config_with(1073741824, 1, 8, 4), 1073741824).find("which needs 4294967296 ranks"),
            std::string::npos);
}

// pipeline.domain is the third factor: world = replicas x stages x blocks, a stage's blocks on consecutive ranks;
// a world that does not fit is refused with all three counts.
TEST(Layout, ADomainSplitIsTheThirdFactorOfTheWorld) {
  Config config = config_with(2, 1, 4);
  config.pipeline.domain = {2, 2};
  for (int rank = 0; rank < 16; ++rank) {
    const Layout layout = make_layout(config, 16, rank);
    EXPECT_EQ(layout.blocks, 4);
    EXPECT_EQ(layout.data_parallel, 2);
    EXPECT_EQ(layout.block, rank % 4);
    EXPECT_EQ(layout.stage_rank, rank / 4 % 2);
    EXPECT_EQ(layout.replica, rank / 8);
  }
  EXPECT_EQ(layout_error(config, 12),
            "config: ranks = replicas x stages x blocks, but with pipeline.stages 2 and pipeline.domain [2, 2] (4 "
            "blocks) the MPI world's 12 ranks are not a multiple of stages x blocks = 8; world sizes that work: 8, 16, "
            "24, 32, ...");
  config.pipeline.data_parallel = 3;
  EXPECT_EQ(layout_error(config, 16),
            "config: ranks = replicas x stages x blocks: pipeline.data_parallel 3 with pipeline.stages 2 and "
            "pipeline.domain [2, 2] (4 blocks) needs 3 x 2 x 4 = 24 ranks, but the MPI world has 16 (drop "
            "data_parallel to derive it as 2)");
  config.pipeline.data_parallel = 0;
  config.pipeline.domain = {1, 1};  // not split: the plain rule
  EXPECT_EQ(make_layout(config, 4, 3).blocks, 1);
  EXPECT_EQ(make_layout(config, 4, 3).block, 0);
  EXPECT_EQ(make_layout(config, 4, 3).data_parallel, 2);
}

// Every resolved order places the 2 stages x 2 replicas x 4 blocks of a 16-rank world one to one, as its nesting
// says (the innermost dimension's index changes from rank to rank), and rank_at inverts it.
TEST(Layout, EveryOrderPlacesTheThreeDimensionsAsItsNestingSays) {
  Config config = config_with(2, 1, 4);
  config.pipeline.domain = {2, 2};
  // (stage, replica, block) of rank r written out per order, innermost first.
  const auto expected = [](RankOrder order, int r) -> std::array<int, 3> {
    switch (order) {
      case RankOrder::kStagesWithinNode: return {r / 4 % 2, r / 8, r % 4};      // blocks, stages, replicas
      case RankOrder::kStagesAcrossNodes: return {r / 8, r / 4 % 2, r % 4};     // blocks, replicas, stages
      case RankOrder::kStagesBlocksReplicas: return {r % 2, r / 8, r / 2 % 4};  // stages, blocks, replicas
      case RankOrder::kStagesReplicasBlocks: return {r % 2, r / 2 % 2, r / 4};  // stages, replicas, blocks
      case RankOrder::kReplicasBlocksStages: return {r / 8, r % 2, r / 2 % 4};  // replicas, blocks, stages
      case RankOrder::kReplicasStagesBlocks: return {r / 2 % 2, r % 2, r / 4};  // replicas, stages, blocks
      default: return {-1, -1, -1};
    }
  };
  for (const RankOrder order : resolved_rank_orders()) {
    std::set<std::array<int, 3>> seen;
    for (int rank = 0; rank < 16; ++rank) {
      const Layout layout = make_layout(config, 16, rank, order);
      const std::array<int, 3> place = {layout.stage_rank, layout.replica, layout.block};
      EXPECT_EQ(place, expected(order, rank)) << rank_order_name(order) << ", rank " << rank;
      EXPECT_EQ(rank_at(order, layout.stage_rank, layout.replica, layout.block, 2, 2, 4), rank);
      seen.insert(place);
    }
    EXPECT_EQ(seen.size(), 16u) << rank_order_name(order);
  }
  // Without a split each of the four new orders is one of the two old layouts.
  config.pipeline.domain = {};
  for (int rank = 0; rank < 4; ++rank) {
    const Layout within = make_layout(config, 4, rank, RankOrder::kStagesWithinNode);
    const Layout across = make_layout(config, 4, rank, RankOrder::kStagesAcrossNodes);
    const Layout stages_first = make_layout(config, 4, rank, RankOrder::kStagesBlocksReplicas);
    const Layout replicas_first = make_layout(config, 4, rank, RankOrder::kReplicasStagesBlocks);
    EXPECT_EQ(std::make_pair(stages_first.stage_rank, stages_first.replica),
              std::make_pair(within.stage_rank, within.replica));
    EXPECT_EQ(std::make_pair(replicas_first.stage_rank, replicas_first.replica),
              std::make_pair(across.stage_rank, across.replica));
  }
}

}  // namespace
}  // namespace sluice::config
