// The block layout a host declares (core/runtime/declared_domain.h) on 4 ranks, one block each of a 2 x 2 split
// of a [1, 16, 12] field: the gathered boxes give the layout, and what cannot be one is refused with the same
// error on every rank, naming the rank, the dimension or the layer. The cases that need a world of other shapes
// (more blocks than ranks, blocks on the wrong ranks) call the pure function on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/runtime/declared_domain.h"
#include "tests/mpi_world.h"

namespace sluice::runtime {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

// Downsampled by 2 once (the pool), so every block offset and extent must be even; the default tile is 2 x 2.
const char* const kConfig = R"(model:
  inputs: [1, 16, 12]
  layers:
    - {type: conv, channels: 2, kernel: 3, padding: periodic}
    - {type: pool, kernel: 2, mode: max, name: down}
    - {type: conv, channels: 2, kernel: 3, padding: periodic}
    - {type: upsample, factor: 2}
    - {type: conv, channels: 1, kernel: 1}
pipeline: {domain: [2, 2]}
)";

const std::vector<int64_t> kGlobal = {16, 12};

// The uneven 2 x 2 split: dimension 1 cut at 6, dimension 2 at 4; block b = row-major (the last dimension fastest).
DeclaredDomain uneven_block(int block) {
  const int64_t row = block / 2, column = block % 2;
  return {kGlobal, config::DomainBox{{row ? 6 : 0, column ? 4 : 0}, {row ? 10 : 6, column ? 8 : 4}}};
}

config::Config test_config() { return config::parse_config(kConfig); }

// What the gather does on this rank (the same on every rank): the error's code and message, or none.
std::optional<Error> gather_error(const std::optional<DeclaredDomain>& mine) {
  try {
    gather_declared_domain(MPI_COMM_WORLD, test_config(), world_rank(), mine);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

void expect_refused(const std::optional<Error>& error, ErrorCode code, const std::vector<std::string>& parts) {
  ASSERT_TRUE(error.has_value()) << "accepted";
  EXPECT_EQ(error->code(), code) << error->what();
  for (const std::string& part : parts) EXPECT_NE(std::string(error->what()).find(part), std::string::npos)
      << "'" << part << "' not in: " << error->what();
}

bool four_ranks() { return world_size() == 4; }

TEST(DeclaredDomain, UnevenTwoByTwoGivesTheLayoutOnEveryRank) {
  if (!four_ranks()) GTEST_SKIP() << "needs 4 ranks";
  const std::optional<config::DomainLayout> layout =
      gather_declared_domain(MPI_COMM_WORLD, test_config(), world_rank(), uneven_block(world_rank()));
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->global, kGlobal);
  EXPECT_EQ(layout->blocks, (std::vector<int>{2, 2}));
  EXPECT_EQ(layout->cuts, (std::vector<std::vector<int64_t>>{{0, 6, 16}, {0, 4, 12}}));
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(layout->box(b).offset, uneven_block(b).box.offset) << "block " << b;
    EXPECT_EQ(layout->box(b).extent, uneven_block(b).box.extent) << "block " << b;
  }
}

TEST(DeclaredDomain, NoDeclarationAnywhereGivesNone) {
  if (!four_ranks()) GTEST_SKIP() << "needs 4 ranks";
  EXPECT_FALSE(gather_declared_domain(MPI_COMM_WORLD, test_config(), world_rank(), std::nullopt).has_value());
}

TEST(DeclaredDomain, ARankThatDeclaredNothingIsNamedOnEveryRank) {
  if (!four_ranks()) GTEST_SKIP() << "needs 4 ranks";
  const int r = world_rank();
  expect_refused(gather_error(r == 3 ? std::nullopt : std::optional<DeclaredDomain>(uneven_block(r))),
                 ErrorCode::kInvalidArgument, {"rank 3 declared no block while rank 0 did"});
}

TEST(DeclaredDomain, OverlappingBoxesAreRefused) {
  if (!four_ranks()) GTEST_SKIP() << "needs 4 ranks";
  DeclaredDomain mine = uneven_block(world_rank());
  if (world_rank() == 1) mine.box = {{0, 2}, {6, 10}};  // dimension 2: [2, 12) overlaps block 0's [0, 4)
  expect_refused(gather_error(mine), ErrorCode::kInvalidArgument,
                 {"in spatial dimension 2 the declared blocks overlap", "rank 1's points [2, 12)"});
}

TEST(DeclaredDomain, ABlockTheModelsDownsamplingDoesNotDivideNamesTheLayer) {
  if (!four_ranks()) GTEST_SKIP() << "needs 4 ranks";
  DeclaredDomain mine = uneven_block(world_rank());
  // dimension 1 cut at 7: the pool halves the field, so block extents 7 and 9 are not whole points below it
  mine.box.offset[0] = world_rank() / 2 ? 7 : 0;
  mine.box.extent[0] = world_rank() / 2 ? 9 : 7;
  expect_refused(gather_error(mine), ErrorCode::kConfig,
                 {"layer 1 (pool \"down\") downsamples spatial dimension 1 by a cumulative factor 2",
                  "spans input points [0, 7)"});
}

TEST(DeclaredDomain, AGlobalExtentOtherThanTheModelsIsRefusedNamingTheRank) {
  if (!four_ranks()) GTEST_SKIP() << "needs 4 ranks";
  DeclaredDomain mine = uneven_block(world_rank());
  if (world_rank() == 2) mine.global = {16, 14};
  expect_refused(gather_error(mine), ErrorCode::kInvalidArgument,
                 {"rank 2: global_extent [16, 14] is not the model's input field [16, 12]"});
}

// The pure function on constructed worlds (every rank computes the same; no messages).
std::vector<RankDeclaration> declarations(const std::vector<DeclaredDomain>& boxes, const std::vector<int>& blocks) {
  std::vector<RankDeclaration> ranks;
  for (size_t r = 0; r < boxes.size(); ++r) ranks.push_back({blocks[r], boxes[r]});
  return ranks;
}

std::optional<Error> pure_error(const std::vector<RankDeclaration>& ranks, const config::Config& cfg = test_config()) {
  try {
    layout_of_declarations(cfg, ranks);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

DeclaredDomain box(std::vector<int64_t> offset, std::vector<int64_t> extent) {
  return {kGlobal, config::DomainBox{std::move(offset), std::move(extent)}};
}

TEST(DeclaredDomainLayout, ABoxOnAnotherRankThanTheLayoutsIsRefused) {
  // ranks 1 and 2 swapped their blocks
  const auto ranks = declarations({uneven_block(0), uneven_block(2), uneven_block(1), uneven_block(3)}, {0, 1, 2, 3});
  expect_refused(pure_error(ranks), ErrorCode::kInvalidArgument,
                 {"rank 1 declared offset [6, 0], extent [10, 4], block 2 of the grid",
                  "the trainer's layout places block 1 on it"});
  // stages x blocks: ranks 4..7 (the second stage) hold the same blocks as ranks 0..3 and declare them again
  std::vector<DeclaredDomain> twice;
  std::vector<int> blocks;
  for (int r = 0; r < 8; ++r) {
    twice.push_back(uneven_block(r % 4));
    blocks.push_back(r % 4);
  }
  EXPECT_FALSE(pure_error(declarations(twice, blocks)).has_value());
}

TEST(DeclaredDomainLayout, ASolverGridOfMoreBlocksThanTrainerRanksIsRefusedWithBothCounts) {
  // a 4 x 2 solver grid of which the trainer's 4 ranks hold one block per grid row
  const auto ranks = declarations({box({0, 0}, {4, 6}), box({4, 6}, {4, 6}), box({8, 0}, {4, 6}),
                                   box({12, 6}, {4, 6})},
                                  {0, 1, 2, 3});
  expect_refused(pure_error(ranks), ErrorCode::kInvalidArgument,
                 {"[4, 2] grid of 8 blocks", "solver blocks 8, trainer ranks 4"});
}

TEST(DeclaredDomainLayout, AGridOtherThanPipelineDomainsIsRefused) {
  const auto ranks =
      declarations({box({0, 0}, {4, 12}), box({4, 0}, {4, 12}), box({8, 0}, {4, 12}), box({12, 0}, {4, 12})},
                   {0, 1, 2, 3});
  expect_refused(pure_error(ranks), ErrorCode::kInvalidArgument,
                 {"[4, 1] grid of 4 blocks", "pipeline.domain is [2, 2] (4 blocks)"});
}

TEST(DeclaredDomainLayout, BoxesThatAreNotAProductGridAreRefused) {
  // every cut is declared, but the cells (0, 1) and (1, 0) by nobody
  const auto ranks = declarations({uneven_block(0), uneven_block(0), uneven_block(3), uneven_block(3)}, {0, 0, 3, 3});
  expect_refused(pure_error(ranks), ErrorCode::kInvalidArgument, {"but only 2 of them are declared"});
  // a gap: dimension 1's blocks end at 14 of 16
  const auto short_of_the_edge = declarations(
      {box({0, 0}, {6, 4}), box({0, 4}, {6, 8}), box({6, 0}, {8, 4}), box({6, 4}, {8, 8})}, {0, 1, 2, 3});
  expect_refused(pure_error(short_of_the_edge), ErrorCode::kInvalidArgument,
                 {"in spatial dimension 1 points [14, 16) are in no declared block"});
}

TEST(DeclaredDomainLayout, ABlockThatIsNotWholeTilesNamesTheTile) {
  config::Config cfg = test_config();
  cfg.pipeline.domain_tile = {4, 4};  // the uneven split's cut at 6 is not on a tile edge
  const auto ranks = declarations({uneven_block(0), uneven_block(1), uneven_block(2), uneven_block(3)}, {0, 1, 2, 3});
  EXPECT_FALSE(pure_error(ranks).has_value());
  expect_refused(pure_error(ranks, cfg), ErrorCode::kConfig,
                 {"pipeline.domain_tile [4, 4]: in spatial dimension 1 block 0 of 2 spans points [0, 6)"});
}

}  // namespace
}  // namespace sluice::runtime
