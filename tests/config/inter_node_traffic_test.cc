// The rank-order arithmetic against a brute-force count: every message a step sends, enumerated from each world
// rank's own place (place_of, searched, not the closed-form rank_at the production code uses), with ordered-sum
// slices cut by literally splitting a buffer; summed over messages whose ends sit on different nodes. Over
// synthetic node maps: 1-4 nodes, 1-8 ranks per node, block and round-robin placement, several (P, DP).
#include "core/config/inter_node_traffic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <utility>
#include <vector>

#include "core/common/error.h"

namespace sluice::config {
namespace {

struct Message {
  int from = 0;
  int to = 0;
  int64_t bytes = 0;
};

int find_rank(RankOrder order, int stage, int replica, int stages, int replicas) {
  for (int r = 0; r < stages * replicas; ++r) {
    const RankPlace p = place_of(order, r, stages, replicas);
    if (p.stage == stage && p.replica == replica) return r;
  }
  ADD_FAILURE() << "no rank holds stage " << stage << " replica " << replica;
  return -1;
}

// Slice lengths of an ordered sum of `count` floats over `replicas`: hand the floats out one by one to the slices
// in blocks, the way a near-equal cut with the remainder at the front must come out.
std::vector<int64_t> slices_by_hand(int64_t count, int replicas) {
  std::vector<int64_t> slices(replicas, count / replicas);
  for (int64_t extra = 0; extra < count % replicas; ++extra) ++slices[extra];
  return slices;
}

std::vector<Message> all_messages(RankOrder order, int stages, int replicas, const StepTraffic& t) {
  std::vector<Message> out;
  const int world = stages * replicas;
  for (int a = 0; a < world; ++a) {
    const RankPlace pa = place_of(order, a, stages, replicas);
    for (const StepTraffic::Boundary& b : t.boundaries) {
      if (b.from_stage != pa.stage) continue;
      out.push_back({a, find_rank(order, b.to_stage, pa.replica, stages, replicas), b.bytes});
    }
    for (const int64_t count : t.gradient_floats[pa.stage]) {
      const std::vector<int64_t> slices = slices_by_hand(count, replicas);
      for (int other = 0; other < replicas; ++other) {
        if (other == pa.replica) continue;
        const int to = find_rank(order, pa.stage, other, stages, replicas);
        out.push_back({a, to, 4 * slices[other]});       // reduce-scatter: the other's slice of my gradients
        out.push_back({a, to, 4 * slices[pa.replica]});  // all-gather: my summed slice
      }
    }
  }
  return out;
}

int64_t brute_force(RankOrder order, const std::vector<int>& node, int stages, const StepTraffic& t) {
  int64_t bytes = 0;
  for (const Message& m : all_messages(order, stages, static_cast<int>(node.size()) / stages, t)) {
    if (node[m.from] != node[m.to]) bytes += m.bytes;
  }
  return bytes;
}

StepTraffic random_traffic(std::mt19937& rng, int stages) {
  std::uniform_int_distribution<int64_t> size(0, 100000);
  std::uniform_int_distribution<int> chunks(1, 2);
  StepTraffic t;
  t.gradient_floats.resize(stages);
  for (int s = 0; s < stages; ++s) {
    for (int c = chunks(rng); c > 0; --c) t.gradient_floats[s].push_back(size(rng));
  }
  for (int s = 0; s + 1 < stages; ++s) t.boundaries.push_back({s, s + 1, size(rng)});
  if (stages > 1 && chunks(rng) == 2) t.boundaries.push_back({stages - 1, 0, size(rng)});  // interleaved wrap
  return t;
}

std::vector<int> node_map(int nodes, int per_node, bool round_robin) {
  std::vector<int> node;
  for (int r = 0; r < nodes * per_node; ++r) node.push_back(round_robin ? r % nodes : r / per_node);
  return node;
}

TEST(InterNodeTraffic, MatchesABruteForceCountOverSyntheticNodeMaps) {
  std::mt19937 rng(7);
  int cases = 0;
  for (int nodes = 1; nodes <= 4; ++nodes) {
    for (int per_node = 1; per_node <= 8; ++per_node) {
      const int world = nodes * per_node;
      for (int stages = 1; stages <= world; ++stages) {
        if (world % stages != 0) continue;
        for (const bool round_robin : {false, true}) {
          const std::vector<int> node = node_map(nodes, per_node, round_robin);
          const StepTraffic t = random_traffic(rng, stages);
          for (const RankOrder order : {RankOrder::kStagesAcrossNodes, RankOrder::kStagesWithinNode}) {
            ASSERT_EQ(inter_node_bytes(order, node, stages, t), brute_force(order, node, stages, t))
                << nodes << " nodes x " << per_node << ", P=" << stages << ", " << rank_order_name(order)
                << (round_robin ? ", round robin" : ", block");
            ++cases;
          }
          const RankOrderChoice choice = choose_rank_order(RankOrder::kAuto, node, stages, t);
          ASSERT_EQ(choice.compared.size(), 2u);  // without a split the other four are these two's layouts
          const int64_t best = std::min(choice.bytes_of(RankOrder::kStagesAcrossNodes),
                                        choice.bytes_of(RankOrder::kStagesWithinNode));
          EXPECT_EQ(inter_node_bytes(choice.order, node, stages, t), best);
          EXPECT_EQ(choice.nodes, nodes);
        }
      }
    }
  }
  EXPECT_GT(cases, 200);
}

// Two nodes of two ranks, P = 2, DP = 2, a model whose gradients outweigh its activations: stages belong across
// the nodes (only the boundary's activations cross), and a requested order is kept even when it costs more.
TEST(InterNodeTraffic, AutoPutsStagesAcrossNodesWhenGradientsOutweighActivations) {
  const std::vector<int> node = {0, 0, 1, 1};
  StepTraffic t;
  t.boundaries = {{0, 1, 1000}};
  t.gradient_floats = {{500000}, {500000}};
  const RankOrderChoice automatic = choose_rank_order(RankOrder::kAuto, node, 2, t);
  EXPECT_EQ(automatic.order, RankOrder::kStagesAcrossNodes);
  EXPECT_EQ(automatic.bytes_of(RankOrder::kStagesAcrossNodes), 2 * 1000);  // each replica's one boundary crosses
  // 2 stages x 2 directions x 2 slices
  EXPECT_EQ(automatic.bytes_of(RankOrder::kStagesWithinNode), 2 * 2 * 2 * 250000 * 4);
  const RankOrderChoice kept = choose_rank_order(RankOrder::kStagesWithinNode, node, 2, t);
  EXPECT_EQ(kept.order, RankOrder::kStagesWithinNode);
}

TEST(InterNodeTraffic, OneNodeKeepsStagesWithinNode) {
  StepTraffic t;
  t.boundaries = {{0, 1, 10}};
  t.gradient_floats = {{10}, {10}};
  const RankOrderChoice c = choose_rank_order(RankOrder::kAuto, {0, 0, 0, 0}, 2, t);
  EXPECT_EQ(c.order, RankOrder::kStagesWithinNode);
  EXPECT_EQ(c.bytes_of(RankOrder::kStagesAcrossNodes), 0);
  EXPECT_EQ(c.bytes_of(RankOrder::kStagesWithinNode), 0);
}

TEST(InterNodeTraffic, RefusesAutoAndMismatchedSizes) {
  StepTraffic t;
  t.gradient_floats = {{1}, {1}};
  EXPECT_THROW(inter_node_bytes(RankOrder::kAuto, {0, 0}, 2, t), Error);
  EXPECT_THROW(inter_node_bytes(RankOrder::kStagesWithinNode, {0, 0, 0}, 2, t), Error);
  t.gradient_floats = {{1}};
  EXPECT_THROW(inter_node_bytes(RankOrder::kStagesWithinNode, {0, 0}, 2, t), Error);
}

// A domain split of 2 blocks, P = 2, DP = 2 on two nodes of four ranks; a stage's blocks are consecutive ranks.
// stages_within_node: replica 0 is ranks 0-3 (stage 0: 0, 1; stage 1: 2, 3), replica 1 ranks 4-7: the boundaries
// and halos stay inside a node, and each block's sum over its 2 replicas of 8 floats crosses: 2 ordered pairs x
// 4 · (4 + 4) bytes = 64 per block, 128 per stage.
// stages_across_nodes: stage 0 is ranks 0-3 (replica 0: 0, 1; replica 1: 2, 3), stage 1 ranks 4-7: each replica's
// per-block boundaries cross (100 + 60), the sums stay inside a node.
TEST(InterNodeTraffic, DomainBlocksAreConsecutiveRanksAndTheirHalosCount) {
  const std::vector<int> node = {0, 0, 0, 0, 1, 1, 1, 1};
  StepTraffic t;
  t.blocks = 2;
  t.boundaries = {{0, 1, 100, 0}, {0, 1, 60, 1}};
  t.halos = {{0, 0, 1, 10}, {0, 1, 0, 10}, {1, 0, 1, 20}, {1, 1, 0, 20}};
  t.gradient_floats = {{8}, {8}};
  EXPECT_EQ(inter_node_bytes(RankOrder::kStagesWithinNode, node, 2, t), 2 * 128);
  EXPECT_EQ(inter_node_bytes(RankOrder::kStagesAcrossNodes, node, 2, t), 2 * (100 + 60));
  // stages_replicas_blocks puts block 0 of both stages and replicas on node 0, block 1 on node 1: only the halos
  // cross (10 + 10 + 20 + 20 per replica), and each block's sum over its replicas stays inside a node.
  EXPECT_EQ(inter_node_bytes(RankOrder::kStagesReplicasBlocks, node, 2, t), 2 * 60);
  EXPECT_EQ(choose_rank_order(RankOrder::kAuto, node, 2, t).order, RankOrder::kStagesReplicasBlocks);
  // One stage, one replica, 4 blocks on two nodes of two ranks: the halos between blocks 0-1 | 2-3 cross.
  StepTraffic halos;
  halos.blocks = 4;
  halos.halos = {{0, 0, 2, 5}, {0, 0, 1, 7}, {0, 3, 1, 11}, {0, 3, 2, 13}};
  halos.gradient_floats = {{0}};
  for (const RankOrder order : {RankOrder::kStagesAcrossNodes, RankOrder::kStagesWithinNode}) {
    EXPECT_EQ(inter_node_bytes(order, {0, 0, 1, 1}, 1, halos), 5 + 11) << rank_order_name(order);
  }
  halos.halos.push_back({0, 4, 0, 1});  // no block 4
  EXPECT_THROW(inter_node_bytes(RankOrder::kStagesWithinNode, {0, 0, 1, 1}, 1, halos), Error);
  // 6 ranks are no world of 2 stages x 2 blocks (they would be without the blocks).
  EXPECT_THROW(inter_node_bytes(RankOrder::kStagesWithinNode, {0, 0, 0, 1, 1, 1}, 2, t), Error);
}

// With a split, every order against a brute-force count: each rank's messages from its own place (place_of with
// blocks; partners searched), halos between its stage's blocks, boundaries to the same block of the next stage,
// its tile gathers to every other block of its stage and replica (the domain group), and the gradient sum over the
// replicas holding its stage and block (MpiContext's data-parallel group).
int find_rank(RankOrder order, RankPlace want, int stages, int replicas, int blocks) {
  for (int r = 0; r < stages * replicas * blocks; ++r) {
    const RankPlace p = place_of(order, r, stages, replicas, blocks);
    if (p.stage == want.stage && p.replica == want.replica && p.block == want.block) return r;
  }
  ADD_FAILURE() << "no rank holds stage " << want.stage << " replica " << want.replica << " block " << want.block;
  return -1;
}

int64_t brute_force_split(RankOrder order, const std::vector<int>& node, int stages, const StepTraffic& t) {
  const int blocks = t.blocks, replicas = static_cast<int>(node.size()) / stages / blocks;
  int64_t bytes = 0;
  const auto send = [&](int from, int to, int64_t b) { bytes += node[from] != node[to] ? b : 0; };
  for (int a = 0; a < static_cast<int>(node.size()); ++a) {
    const RankPlace p = place_of(order, a, stages, replicas, blocks);
    for (const StepTraffic::Boundary& b : t.boundaries) {
      if (b.from_stage == p.stage && b.block == p.block) {
        send(a, find_rank(order, {b.to_stage, p.replica, p.block}, stages, replicas, blocks), b.bytes);
      }
    }
    for (const StepTraffic::Halo& h : t.halos) {
      if (h.stage == p.stage && h.from_block == p.block) {
        send(a, find_rank(order, {p.stage, p.replica, h.to_block}, stages, replicas, blocks), h.bytes);
      }
    }
    for (const StepTraffic::Gather& g : t.gathers) {
      if (g.stage != p.stage || g.block != p.block) continue;
      for (int other = 0; other < blocks; ++other) {
        if (other != p.block) send(a, find_rank(order, {p.stage, p.replica, other}, stages, replicas, blocks), g.bytes);
      }
    }
    for (const int64_t count : t.gradient_floats[p.stage]) {
      const std::vector<int64_t> slices = slices_by_hand(count, replicas);
      for (int other = 0; other < replicas; ++other) {
        if (other == p.replica) continue;
        const int to = find_rank(order, {p.stage, other, p.block}, stages, replicas, blocks);
        send(a, to, 4 * (slices[other] + slices[p.replica]));
      }
    }
  }
  return bytes;
}

TEST(InterNodeTraffic, EveryOrderOfASplitMatchesABruteForceCount) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> size(0, 100000);
  int cases = 0;
  for (const auto& [stages, replicas, blocks] : {std::array<int, 3>{2, 2, 2}, {2, 1, 4}, {3, 2, 2}, {1, 3, 4}}) {
    StepTraffic t = random_traffic(rng, stages);
    t.blocks = blocks;
    std::vector<StepTraffic::Boundary> per_block;
    for (const StepTraffic::Boundary& b : t.boundaries) {
      for (int k = 0; k < blocks; ++k) per_block.push_back({b.from_stage, b.to_stage, size(rng), k});
    }
    t.boundaries = per_block;
    for (int s = 0; s < stages; ++s) {
      for (int k = 0; k + 1 < blocks; ++k) {
        t.halos.push_back({s, k, k + 1, size(rng)});
        t.halos.push_back({s, k + 1, k, size(rng)});
      }
      for (int k = 0; k < blocks; ++k) t.gathers.push_back({s, k, size(rng)});  // uneven blocks: each its own
    }
    const int world = stages * replicas * blocks;
    for (const int per_node : {2, 4}) {
      if (world % per_node != 0) continue;
      for (const bool round_robin : {false, true}) {
        const std::vector<int> node = node_map(world / per_node, per_node, round_robin);
        for (const RankOrder order : resolved_rank_orders()) {
          ASSERT_EQ(inter_node_bytes(order, node, stages, t), brute_force_split(order, node, stages, t))
              << "P=" << stages << " DP=" << replicas << " B=" << blocks << ", " << per_node << " per node, "
              << rank_order_name(order) << (round_robin ? ", round robin" : ", block");
          ++cases;
        }
        const RankOrderChoice choice = choose_rank_order(RankOrder::kAuto, node, stages, t);
        ASSERT_EQ(choice.compared.size(), 6u);
        for (const auto& [order, bytes] : choice.compared) EXPECT_LE(choice.bytes_of(choice.order), bytes);
      }
    }
  }
  EXPECT_GT(cases, 50);
}

// A stage's 4 blocks of a 2 x 2 grid exchange a halo with each grid neighbour (both directions): `halo` bytes each.
StepTraffic two_stages_of_four_blocks(int64_t halo, int64_t boundary) {
  StepTraffic t;
  t.blocks = 4;
  t.gradient_floats = {{0}, {0}};
  for (int b = 0; b < 4; ++b) t.boundaries.push_back({0, 1, boundary, b});
  for (int s = 0; s < 2; ++s) {
    for (const auto& [a, b] : {std::pair<int, int>{0, 1}, {2, 3}, {0, 2}, {1, 3}}) {
      t.halos.push_back({s, a, b, halo});
      t.halos.push_back({s, b, a, halo});
    }
  }
  return t;
}

// Two nodes of four ranks, 2 stages x 4 blocks, halos heavier than activations: a stage's blocks belong inside a
// node and the stages across. With blocks innermost (stages_within_node; one replica: stages_across_nodes is the
// same layout and the tie keeps the earlier) only the 4 block boundaries cross; stages innermost puts blocks 0, 1
// on node 0 and 2, 3 on node 1: the 4 halos between them cross on both stages.
TEST(InterNodeTraffic, AutoKeepsAStagesBlocksInsideANodeWhenHalosOutweighActivations) {
  const StepTraffic t = two_stages_of_four_blocks(1000, 10);
  const RankOrderChoice c = choose_rank_order(RankOrder::kAuto, {0, 0, 0, 0, 1, 1, 1, 1}, 2, t);
  EXPECT_EQ(c.order, RankOrder::kStagesWithinNode);
  EXPECT_EQ(c.bytes_of(RankOrder::kStagesWithinNode), 4 * 10);
  EXPECT_EQ(c.bytes_of(RankOrder::kStagesAcrossNodes), 4 * 10);
  EXPECT_EQ(c.bytes_of(RankOrder::kStagesBlocksReplicas), 2 * 4 * 1000);
  EXPECT_EQ(c.bytes_of(RankOrder::kReplicasStagesBlocks), 2 * 4 * 1000);
  EXPECT_EQ(rank_nesting_text(c.order), "blocks, stages, replicas");
}

// The opposite: four nodes of two ranks, activations heavier than halos. Stages innermost gives each node one
// block's two stages: no boundary crosses, every halo does (8 per stage); blocks innermost puts each stage's blocks
// on two nodes: all 4 boundaries cross, and the 4 halos between blocks 0, 1 and 2, 3 on each stage.
TEST(InterNodeTraffic, AutoKeepsABlocksStagesInsideANodeWhenActivationsOutweighHalos) {
  const StepTraffic t = two_stages_of_four_blocks(10, 1000);
  const RankOrderChoice c = choose_rank_order(RankOrder::kAuto, {0, 0, 1, 1, 2, 2, 3, 3}, 2, t);
  EXPECT_EQ(c.order, RankOrder::kStagesBlocksReplicas);
  EXPECT_EQ(c.bytes_of(RankOrder::kStagesBlocksReplicas), 2 * 8 * 10);
  EXPECT_EQ(c.bytes_of(RankOrder::kStagesWithinNode), 4 * 1000 + 2 * 4 * 10);
  EXPECT_EQ(rank_nesting_text(c.order), "stages, blocks, replicas");
  // A host that declared its blocks expects block = rank % blocks: auto compares only the two orders keeping them.
  const RankOrderChoice declared = choose_rank_order(RankOrder::kAuto, {0, 0, 1, 1, 2, 2, 3, 3}, 2, t, true);
  EXPECT_EQ(declared.order, RankOrder::kStagesWithinNode);
  EXPECT_EQ(declared.compared.size(), 2u);
  // A requested order is kept, and its bytes reported, even when auto would choose another.
  const RankOrderChoice kept = choose_rank_order(RankOrder::kStagesWithinNode, {0, 0, 1, 1, 2, 2, 3, 3}, 2, t);
  EXPECT_EQ(kept.order, RankOrder::kStagesWithinNode);
  EXPECT_EQ(kept.compared.size(), 6u);
  // Without a split only the two old orders are compared; a new one asked for is added to the report.
  StepTraffic plain;
  plain.boundaries = {{0, 1, 10}};
  plain.gradient_floats = {{10}, {10}};
  const RankOrderChoice asked = choose_rank_order(RankOrder::kReplicasStagesBlocks, {0, 0, 1, 1}, 2, plain);
  EXPECT_EQ(asked.order, RankOrder::kReplicasStagesBlocks);
  ASSERT_EQ(asked.compared.size(), 3u);
  EXPECT_EQ(asked.bytes_of(RankOrder::kReplicasStagesBlocks), asked.bytes_of(RankOrder::kStagesAcrossNodes));
}

// The domain group's tile gathers count: every block sends its tiles to each other block of its stage (issue 32's
// 40 x 40 x 8 bench, where leaving them out chose the order that moved more). Two nodes of four ranks, 2 stages x 4
// blocks, boundaries of 1000 bytes per block, no halos, `gather` bytes from each block to each other one.
// Blocks innermost keep every gather inside a node and cross the 4 boundaries: 4000. Stages innermost put blocks
// 0, 1 on node 0 and 2, 3 on node 1: per stage each block's gathers to the 2 blocks on the other node, 2 x 4 x 2.
TEST(InterNodeTraffic, TileGathersCountBetweenTheBlocksOfAStage) {
  const std::vector<int> node = {0, 0, 0, 0, 1, 1, 1, 1};
  for (const auto& [gather, chosen] : {std::pair<int64_t, RankOrder>{300, RankOrder::kStagesWithinNode},
                                       {100, RankOrder::kStagesBlocksReplicas}}) {
    StepTraffic t = two_stages_of_four_blocks(0, 1000);
    for (int s = 0; s < 2; ++s) {
      for (int b = 0; b < 4; ++b) t.gathers.push_back({s, b, gather});
    }
    const RankOrderChoice c = choose_rank_order(RankOrder::kAuto, node, 2, t);
    EXPECT_EQ(c.bytes_of(RankOrder::kStagesWithinNode), 4 * 1000);
    EXPECT_EQ(c.bytes_of(RankOrder::kStagesBlocksReplicas), 2 * 4 * 2 * gather);
    EXPECT_EQ(c.order, chosen) << "gather " << gather;
  }
  StepTraffic outside = two_stages_of_four_blocks(0, 1000);
  outside.gathers.push_back({0, 4, 1});  // no block 4
  EXPECT_THROW(inter_node_bytes(RankOrder::kStagesWithinNode, node, 2, outside), Error);
}

}  // namespace
}  // namespace sluice::config
