// Which skips travel straight between stages (core/model/skip_routes.h): a skip read two or more stages after the
// stage that makes it gets a route; one read on the next stage stays in the activation; a skip read on several
// stages goes from each stage that touches it to the next one; the routed columns sit where the sending and the
// receiving stage's own layers carry them (skip_plan's ranged form), and no stage in between holds them.
#include "core/model/skip_routes.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/config/config_parser.h"
#include "core/config/sample_shape.h"
#include "core/model/model_shape.h"
#include "core/model/stage_widths.h"

namespace sluice::model {
namespace {

SkipRoutes routes_of(const std::string& layers, const std::vector<LayerRange>& ranges) {
  const config::Config cfg = config::parse_config("model:\n  inputs: 3\n  layers:\n" + layers);
  std::vector<int64_t> main_out;
  for (const auto& shape : model_shape(cfg.model, {})) main_out.push_back(config::features_of(shape.out_shape));
  return skip_routes(cfg.model.layers, main_out, ranges);
}

// a (4 wide) is read on stage 2 and stage 4; b (5 wide) on stage 1, the next stage.
const char* const kLayers =
    "    - {type: linear, outputs: 4, name: a}\n"   // 0, stage 0
    "    - {type: linear, outputs: 5, name: b}\n"   // 1, stage 0
    "    - {type: add, from: b}\n"                  // 2, stage 1
    "    - {type: linear, outputs: 4}\n"            // 3, stage 1
    "    - {type: add, from: a}\n"                  // 4, stage 2
    "    - {type: relu}\n"                          // 5, stage 3
    "    - {type: concat, from: a}\n"               // 6, stage 4
    "    - {type: linear, outputs: 2}\n";           // 7, stage 4

TEST(SkipRoutes, EachTouchingStageSendsToTheNextOneTwoOrMoreStagesOn) {
  const SkipRoutes routes = routes_of(kLayers, {{0, 2}, {2, 4}, {4, 5}, {5, 6}, {6, 8}});
  ASSERT_EQ(routes.routes.size(), 2u);
  EXPECT_EQ(routes.routes[0].from, 0);
  EXPECT_EQ(routes.routes[0].to, 2);
  EXPECT_EQ(routes.routes[0].features, 4);
  EXPECT_EQ(routes.routes[1].from, 2);
  EXPECT_EQ(routes.routes[1].to, 4);
  // Boundary 0: stage 0's output is [b's 5 | a | b] (main = b's output); a is routed and only stage 0 holds it,
  // b rides to stage 1 in the activation: stage 1's input is [5 | b].
  ASSERT_EQ(routes.sent.size(), 4u);
  ASSERT_EQ(routes.received.size(), 4u);
  ASSERT_EQ(routes.sent[0].size(), 1u);
  EXPECT_EQ(routes.sent[0][0].first, 5);
  EXPECT_EQ(routes.sent[0][0].count, 4);
  EXPECT_EQ(routes.sent[0][0].route, 0);
  EXPECT_TRUE(routes.received[0].empty()) << "stage 1 does not hold a";
  // Boundary 1 (stage 1 -> 2): stage 1's output is the main 4 alone; stage 2's input [4 | a], a from route 0.
  EXPECT_TRUE(routes.sent[1].empty()) << "stage 1 does not hold a";
  ASSERT_EQ(routes.received[1].size(), 1u);
  EXPECT_EQ(routes.received[1][0].route, 0);
  EXPECT_EQ(routes.received[1][0].first, 4);
  // Boundaries 2 and 3: a on route 1, in stage 2's output and stage 4's input; stage 3 never holds it.
  ASSERT_EQ(routes.sent[2].size(), 1u);
  EXPECT_EQ(routes.sent[2][0].route, 1);
  EXPECT_TRUE(routes.received[2].empty());
  EXPECT_TRUE(routes.sent[3].empty());
  ASSERT_EQ(routes.received[3].size(), 1u);
  EXPECT_EQ(routes.received[3][0].route, 1);
  EXPECT_EQ(routes.received[3][0].first, 4);
}

// The activation messages (stage_widths.h) without the routed columns: [5 | b], then the main 4 at every other
// boundary (a goes on routes 0 -> 2 and 2 -> 4).
TEST(SkipRoutes, ActivationMessagesLeaveTheRoutedColumnsOut) {
  const config::Config cfg = config::parse_config("model:\n  inputs: 3\n  layers:\n" + std::string(kLayers));
  const std::vector<LayerShape> shapes = model_shape(cfg.model, {});
  const std::vector<LayerRange> ranges = {{0, 2}, {2, 4}, {4, 5}, {5, 6}, {6, 8}};
  EXPECT_EQ(activation_widths(shapes, ranges, skip_routes_of(cfg.model, shapes, ranges)),
            (std::vector<int64_t>{10, 4, 4, 4}));
}

TEST(SkipRoutes, NeighbouringStagesAndOneStageNeedNoRoute) {
  EXPECT_TRUE(routes_of(kLayers, {{0, 8}}).empty());
  // Every touching stage next to the previous one: a on stages 0, 1, 2; b on 0, 1.
  EXPECT_TRUE(routes_of(kLayers, {{0, 2}, {2, 5}, {5, 8}}).empty());
}

}  // namespace
}  // namespace sluice::model
