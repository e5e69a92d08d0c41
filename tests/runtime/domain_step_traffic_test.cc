// The rank-order estimate's traffic with a domain split (issue 32): step_traffic adds each stage's halos over a step
// and cuts each stage boundary into the blocks that carry it. No MPI call: step_traffic is arithmetic.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/model/model_shape.h"
#include "core/runtime/rank_order_choice.h"

namespace sluice::runtime {
namespace {

// The U-Net of tests/tools/domain_cli_test.sh on 2 stages: layers 0-2 (conv, relu, pool) and 3-6.
const char* const kUnet = R"(model:
  inputs: [2, 16, 16]
  layers:
    - {type: conv, channels: 4, kernel: 3, padding: zeros, name: enc}
    - {type: relu}
    - {type: pool, kernel: 2, mode: max}
    - {type: conv, channels: 8, kernel: 3, padding: periodic}
    - {type: upsample, factor: 2}
    - {type: concat, from: enc}
    - {type: conv, channels: 1, kernel: 1}
pipeline: {stages: 2, split: [3, 4], domain: [2, 2]}
data: {type: synthetic, batch: 2}
)";

// Without a domain: a skip from the first of four stages to the last (core/model/skip_routes.h) crosses only once,
// from rank 0 to rank 3; the boundaries between carry the main tensor alone.
TEST(StepTraffic, ARoutedSkipGoesOnceFromItsSenderToItsReader) {
  const config::Config cfg = config::parse_config(R"(model:
  inputs: 3
  layers:
    - {type: linear, outputs: 8, name: a}
    - {type: linear, outputs: 4}
    - {type: linear, outputs: 4}
    - {type: concat, from: a}
    - {type: linear, outputs: 2}
pipeline: {stages: 4, split: [1, 1, 1, 2]}
data: {type: synthetic, batch: 2}
)");
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, {});
  const config::StepTraffic t = step_traffic(cfg, shapes, {1, 1, 1, 2}, {0, 1, 2, 3}, 1);
  std::map<std::pair<int, int>, int64_t> bytes;
  for (const config::StepTraffic::Boundary& b : t.boundaries) bytes[{b.from_stage, b.to_stage}] += b.bytes;
  const int64_t per_float = 2 * 2 * 4;  // forward and backward, 2 rows, 4-byte floats
  const std::map<std::pair<int, int>, int64_t> expected = {
      {{0, 1}, 8 * per_float}, {{1, 2}, 4 * per_float}, {{2, 3}, 4 * per_float}, {{0, 3}, 8 * per_float}};
  EXPECT_EQ(bytes, expected);
}

TEST(DomainStepTraffic, HalosPerStageAndBoundariesPerBlock) {
  const config::Config cfg = config::parse_config(kUnet);
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, {});
  const config::StepTraffic t = step_traffic(cfg, shapes, {3, 4}, {0, 1}, 1);
  EXPECT_EQ(t.blocks, 4);
  std::map<int, int64_t> halo_by_stage;
  for (const config::StepTraffic::Halo& h : t.halos) {
    EXPECT_NE(h.from_block, h.to_block);
    halo_by_stage[h.stage] += h.bytes;
  }
  // Per sample (hand counts in domain_cli_test.sh, what halo_fill sends): layer 0 (padding zeros: nothing across
  // the field's edges) on stage 0, 576 bytes forward and no backward (the first layer computes no input gradient);
  // layer 3 on stage 1, 1280 and 2560; 2 rows.
  EXPECT_EQ(halo_by_stage[0], 2 * 576);
  EXPECT_EQ(halo_by_stage[1], 2 * (1280 + 2560));
  // On 2 x 2 blocks the fill relays the corners through the side neighbours: no bytes on the diagonal links
  // (blocks 0-3, 1-2), and every block sends the same on each side link: layer 0 forward per block, dimension 1
  // (to block 0 ^ 2) 1 strip 1 x 8 of 2 channels, 64 bytes; dimension 2 (to block 0 ^ 1) 1 strip 10 x 1, 80 (the
  // other strip of each would cross the field's zero edge).
  std::map<std::pair<int, int>, int64_t> stage0_link;
  for (const config::StepTraffic::Halo& h : t.halos) {
    EXPECT_NE(h.from_block + h.to_block, 3) << "bytes on the diagonal link " << h.from_block << "-" << h.to_block;
    if (h.stage == 0) stage0_link[{h.from_block, h.to_block}] += h.bytes;
  }
  EXPECT_EQ((stage0_link[{0, 2}]), 2 * 64);
  EXPECT_EQ((stage0_link[{0, 1}]), 2 * 80);
  // The cut carries the pool's output [4, 8, 8] and the skip `enc` [4, 16, 16]: 256 + 1024 floats, forward and
  // backward, 2 rows: 20480 bytes, a quarter per block.
  ASSERT_EQ(t.boundaries.size(), 4u);
  for (int block = 0; block < 4; ++block) {
    EXPECT_EQ(t.boundaries[block].block, block);
    EXPECT_EQ(t.boundaries[block].bytes, 20480 / 4);
  }
  // Without the split: one boundary, no halos.
  const config::Config whole = config::parse_config(kUnet, {"pipeline.domain=[1, 1]"});
  const config::StepTraffic plain = step_traffic(whole, shapes, {3, 4}, {0, 1}, 1);
  EXPECT_TRUE(plain.halos.empty());
  ASSERT_EQ(plain.boundaries.size(), 1u);
  EXPECT_EQ(plain.boundaries[0].bytes, 20480);
}

// Each block's tile gathers per step, to each other block of its stage (hand count, docs/DOMAIN.md "Messages per op
// and their bytes"): the default tile [2, 2] gives every 8 x 8 block 16 tiles; per tile and layer with parameters
// 8 bytes of index + 4 per parameter, once per call; the loss 16 bytes per tile and micro-batch on the last stage.
// Stage 0: conv 2 -> 4, 3 x 3: 76 parameters, 8 + 304 = 312. Stage 1: conv 4 -> 8, 3 x 3: 296 parameters, 1192;
// the 1 x 1 conv on 8 + 4 channels: 13, 60; the loss in 2 micro-batches, 32: 1284.
TEST(DomainStepTraffic, TileGathersPerBlockAndStage) {
  const config::Config cfg = config::parse_config(kUnet, {"pipeline.microbatches=2"});
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, {});
  const config::StepTraffic t = step_traffic(cfg, shapes, {3, 4}, {0, 1}, 1);
  std::map<std::pair<int, int>, int64_t> sent;
  for (const config::StepTraffic::Gather& g : t.gathers) sent[{g.stage, g.block}] += g.bytes;
  ASSERT_EQ(sent.size(), 8u);
  for (int block = 0; block < 4; ++block) {
    EXPECT_EQ((sent[{0, block}]), 16 * 312) << "block " << block;
    EXPECT_EQ((sent[{1, block}]), 16 * 1284) << "block " << block;
  }
  // optimizer.accumulate 2: two calls per step, each gathering the parameters' partials and the loss.
  const config::Config twice = config::parse_config(kUnet, {"pipeline.microbatches=2", "optimizer={type: adamw, lr: 0.001, accumulate: 2}"});
  for (const config::StepTraffic::Gather& g : step_traffic(twice, shapes, {3, 4}, {0, 1}, 1).gathers) {
    EXPECT_EQ(g.bytes, 2 * 16 * (g.stage == 0 ? 312 : 1284));
  }
  // A group norm in place of the relu on stage 0 (4 channels in 2 groups): its parameters 8 floats, 8 + 32, and per
  // micro-batch forward and backward 8 + 16 x rows x groups, summed over the 2 micro-batches of 1 row: 2 x (2 x 8 +
  // 16 x 2 x 2) = 160.
  const config::Config norm =
      config::parse_config(kUnet, {"pipeline.microbatches=2", "model.layers.1={type: group_norm, groups: 2}"});
  const std::vector<model::LayerShape> norm_shapes = model::model_shape(norm.model, {});
  for (const config::StepTraffic::Gather& g : step_traffic(norm, norm_shapes, {3, 4}, {0, 1}, 1).gathers) {
    EXPECT_EQ(g.bytes, 16 * (g.stage == 0 ? 312 + 40 + 160 : 1284));
  }
}

// The start report's rank-order line: with a split it compares all six orders and spells out the chosen nesting;
// without one it reads as it always has (two orders).
TEST(DomainStepTraffic, TheReportNamesTheChosenOrderAndItsNesting) {
  const config::Config cfg = config::parse_config(kUnet);
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, {});
  // 2 stages x 4 blocks on four nodes of two ranks: which order wins is the model's business; the line must name
  // it, every option's bytes, and the nesting.
  const config::StepTraffic t = step_traffic(cfg, shapes, {3, 4}, {0, 1}, 1);
  const config::RankOrderChoice choice =
      config::choose_rank_order(config::RankOrder::kAuto, {0, 0, 1, 1, 2, 2, 3, 3}, 2, t);
  const std::string line = describe(choice, config::RankOrder::kAuto);
  EXPECT_EQ(line.find("rank order " + config::rank_order_name(choice.order) + " (auto, 4 node(s)); inter-node bytes "
                      "per optimizer step: stages_across_nodes "),
            0u)
      << line;
  for (const config::RankOrder order : config::resolved_rank_orders()) {
    EXPECT_NE(line.find(config::rank_order_name(order) + " "), std::string::npos) << line;
  }
  EXPECT_NE(line.find("; world ranks run through " + config::rank_nesting_text(choice.order) + " (innermost first)"),
            std::string::npos)
      << line;
  config::StepTraffic none;
  none.gradient_floats.resize(2);
  EXPECT_EQ(describe(config::choose_rank_order(config::RankOrder::kAuto, {0, 0, 0, 0}, 2, none),
                     config::RankOrder::kAuto),
            "rank order stages_within_node (auto, 1 node(s)); inter-node bytes per optimizer step: stages_across_nodes "
            "0 MB, stages_within_node 0 MB (0 and 0 bytes of MPI payload)");
}

}  // namespace
}  // namespace sluice::runtime
