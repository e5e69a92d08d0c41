// Skips across stages travel straight from producer to reader (issue 27 item 3): with a skip from the first of
// three stages to the last, the middle rank's activation and gradient messages hold only the main tensor, and the
// skip tensor (forward) and its gradient (backward) go between the first and last ranks in their own messages.
// Every rank's step runs alone over a transport that completes at once (receives read zeros) and records each
// message's size.
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

struct SkipModel {
  config::Config cfg = config::parse_config(kModel);
  std::vector<model::LayerRange> ranges{{0, 1}, {1, 3}, {3, 5}};
  model::SkipRoutes routes;
  schedule::Schedule lowered;
  SkipModel() {
    std::vector<int64_t> main_out;
    for (const auto& shape : model::model_shape(cfg.model, {})) main_out.push_back(config::features_of(shape.out_shape));
    routes = model::skip_routes(cfg.model.layers, main_out, ranges);
    schedule::Schedule compute = schedule::make_schedule("1f1b", 3, 2);
    for (const auto& route : routes.routes) compute.skips.push_back({route.from, route.to});
    lowered = schedule::lower(compute);
  }
};

// Runs rank `rank`'s step of 4 rows (2 per micro-batch) and returns the messages it posted; `training` false runs
// the forward-only list, as a prediction does.
std::vector<Message> messages_of(const SkipModel& setup, int rank, bool training = true) {
  kernels::Backend& backend = kernels::cpu_backend();
  auto layers = model::build_layers(setup.cfg.model, backend);
  model::init_layers(layers, 1);
  std::vector<std::unique_ptr<model::StageModule>> owned;
  std::map<int, model::StageModule*> stages;
  const model::LayerRange range = setup.ranges[rank];
  std::vector<std::unique_ptr<model::Layer>> mine;
  for (int i = range.first; i < range.last; ++i) mine.push_back(std::move(layers[i]));
  owned.push_back(std::make_unique<model::StageModule>(backend, range.first, std::move(mine)));
  stages[rank] = owned.back().get();
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
  StepCounters counters;
  EXPECT_FALSE(executor.run(data, counters, false).error) << "rank " << rank;
  return transport.messages;
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

}  // namespace
}  // namespace sluice::runtime
