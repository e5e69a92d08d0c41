// Skips across stages travel straight from producer to reader (issue 27 item 3): with a skip from the first of
// three stages to the last, the middle rank's activation and gradient messages hold only the main tensor, and the
// skip tensor (forward) and its gradient (backward) go between the first and last ranks in their own messages; the
// middle stage does not hold the skip at all: its input, output and stash are the main tensor's, as in the same
// model without the skip. Every rank's step runs alone over a transport that completes at once (receives read
// zeros) and records each message's size.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/config/config_parser.h"
#include "core/model/builder.h"
#include "core/model/model_shape.h"
#include "core/model/skip_routes.h"
#include "core/model/stage_module.h"
#include "core/runtime/executor.h"
#include "core/schedule/forward_only.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::runtime {
namespace {

struct Message {
  bool send;
  int peer;
  int64_t floats;
};

class RecordingTransport : public comm::Transport {
 public:
  RecordingTransport(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<comm::Request> isend(const float*, int64_t count, int peer, int) override {
    messages.push_back({true, peer, count});
    return std::make_unique<Done>();
  }
  std::unique_ptr<comm::Request> irecv(float* data, int64_t count, int peer, int) override {
    std::fill(data, data + count, 0.0f);
    messages.push_back({false, peer, count});
    return std::make_unique<Done>();
  }
  std::vector<Message> messages;

 private:
  struct Done : comm::Request {
    void wait() override {}
    bool test() override { return true; }
  };
  int rank_, size_;
};

// Layer 0 (stage 0) is read by the add on layer 3 (stage 2); each main tensor is 4 wide, so is the skip.
const char* const kModel =
    "model:\n  inputs: 3\n  layers:\n"
    "    - {type: linear, outputs: 4, name: a}\n"
    "    - {type: relu}\n"
    "    - {type: linear, outputs: 4}\n"
    "    - {type: add, from: a}\n"
    "    - {type: linear, outputs: 2}\n"
    "pipeline: {stages: 3, schedule: 1f1b, microbatches: 2}\n";
// The same main chain without the skip: the middle stage (layers 1 and 2) is the same.
const char* const kNoSkip =
    "model:\n  inputs: 3\n  layers:\n"
    "    - {type: linear, outputs: 4}\n"
    "    - {type: relu}\n"
    "    - {type: linear, outputs: 4}\n"
    "    - {type: relu}\n"
    "    - {type: linear, outputs: 2}\n"
    "pipeline: {stages: 3, schedule: 1f1b, microbatches: 2}\n";

struct SkipModel {
  config::Config cfg;
  std::vector<model::LayerRange> ranges{{0, 1}, {1, 3}, {3, 5}};
  model::SkipRoutes routes;
  schedule::Schedule lowered;
  explicit SkipModel(const char* yaml = kModel) : cfg(config::parse_config(yaml)) {
    std::vector<int64_t> main_out;
    for (const auto& shape : model::model_shape(cfg.model, {})) main_out.push_back(config::features_of(shape.out_shape));
    routes = model::skip_routes(cfg.model.layers, main_out, ranges);
    schedule::Schedule compute = schedule::make_schedule("1f1b", 3, 2);
    for (const auto& route : routes.routes) compute.skips.push_back({route.from, route.to});
    lowered = schedule::lower(compute);
  }
};

struct RankStep {
  std::vector<Message> messages;  // in the order posted
  StepCounters counters;
  int64_t stage_in = 0, stage_out = 0;  // the stage's input and output widths
};

// Runs rank `rank`'s step of 4 rows (2 per micro-batch), its stage built as the trainer builds it; `training` false
// runs the forward-only list, as a prediction does.
RankStep step_of(const SkipModel& setup, int rank, bool training = true,
                 model::RecomputeMode recompute = model::RecomputeMode::kNone) {
  kernels::Backend& backend = kernels::cpu_backend();
  const model::LayerRange range = setup.ranges[rank];
  const auto shapes = model::model_shape(setup.cfg.model, {});
  auto mine = model::build_layers(setup.cfg.model, backend, {}, range.first, range.last, shapes[range.first].in_shape);
  model::init_layers(mine, 1);
  model::StageModule stage(backend, range.first, std::move(mine), model::recompute_policy(recompute, {}));
  std::map<int, model::StageModule*> stages{{rank, &stage}};
  RecordingTransport transport(rank, 3);
  auto loss = [](const kernels::Tensor&, const float*, int64_t, kernels::Tensor&) { return 0.0; };
  const schedule::Schedule forward = schedule::forward_only(setup.lowered);
  Executor executor(training ? setup.lowered : forward, rank, stages, backend, transport, loss, [](int) {}, nullptr,
                    setup.routes);
  const std::vector<float> inputs(4 * 3, 0.5f), targets(4 * 2, 0.0f);
  StepData data;
  data.inputs = inputs.data();
  data.targets = targets.data();
  data.rows = 4;
  data.input_features = 3;
  data.target_features = 2;
  data.global_batch = 4;
  data.training = training;
  RankStep result;
  EXPECT_FALSE(executor.run(data, result.counters, false).error) << "rank " << rank;
  result.messages = transport.messages;
  result.stage_in = stage.in_features();
  result.stage_out = stage.out_features();
  return result;
}

std::vector<Message> messages_of(const SkipModel& setup, int rank, bool training = true) {
  return step_of(setup, rank, training).messages;
}

TEST(SkipRouteBytes, TheSkipGoesFromTheFirstRankToTheLastOnly) {
  const SkipModel setup;
  ASSERT_EQ(setup.routes.routes.size(), 1u);
  EXPECT_EQ(setup.routes.routes[0].from, 0);
  EXPECT_EQ(setup.routes.routes[0].to, 2);
  EXPECT_EQ(setup.routes.routes[0].features, 4);
  // The middle rank: 2 micro-batches x (activation in and out, gradient in and out), 2 rows x 4 main columns each.
  const std::vector<Message> middle = messages_of(setup, 1);
  EXPECT_EQ(middle.size(), 8u);
  for (const Message& m : middle) EXPECT_EQ(m.floats, 2 * 4) << (m.send ? "send to " : "receive from ") << m.peer;
  // The first rank sends the skip tensor to rank 2 and receives its gradient from there, once per micro-batch.
  int skip_sends = 0, skip_gradients = 0;
  for (const Message& m : messages_of(setup, 0)) {
    EXPECT_EQ(m.floats, 2 * 4);
    skip_sends += m.send && m.peer == 2;
    skip_gradients += !m.send && m.peer == 2;
  }
  EXPECT_EQ(skip_sends, 2);
  EXPECT_EQ(skip_gradients, 2);
  int from_first = 0;
  for (const Message& m : messages_of(setup, 2)) from_first += m.peer == 0;
  EXPECT_EQ(from_first, 4);  // the skip in, its gradient out, per micro-batch
}

TEST(SkipRouteBytes, APredictionSendsTheSkipStraightToTheLastRankToo) {
  const SkipModel setup;
  const std::vector<Message> middle = messages_of(setup, 1, false);
  EXPECT_EQ(middle.size(), 4u);  // activation in and out per micro-batch
  for (const Message& m : middle) EXPECT_EQ(m.floats, 2 * 4);
  int skips = 0;
  for (const Message& m : messages_of(setup, 2, false)) skips += !m.send && m.peer == 0 && m.floats == 2 * 4;
  EXPECT_EQ(skips, 2);
}

// The middle stage holds only the main tensor: its input and output are 4 wide (not 4 + the skip's 4), and what it
// stashes per micro-batch is what the same stage stashes without the skip: the stage input kept for a full
// recompute, and the layers' saved state and output gradients.
TEST(SkipRouteBytes, TheMiddleStageHoldsOnlyTheMainTensor) {
  const SkipModel skip, plain(kNoSkip);
  ASSERT_TRUE(plain.routes.empty());
  for (const model::RecomputeMode recompute : {model::RecomputeMode::kNone, model::RecomputeMode::kFull}) {
    const RankStep with = step_of(skip, 1, true, recompute), without = step_of(plain, 1, true, recompute);
    EXPECT_EQ(with.stage_in, 4);
    EXPECT_EQ(with.stage_out, 4);
    EXPECT_GT(with.counters.peak_stash_bytes, 0u);
    EXPECT_EQ(with.counters.peak_stash_bytes, without.counters.peak_stash_bytes)
        << "recompute " << static_cast<int>(recompute);
    EXPECT_EQ(with.counters.peak_stash_microbatches, without.counters.peak_stash_microbatches);
  }
}

}  // namespace
}  // namespace sluice::runtime
