// The executor owns its message-tag layout, so it also owns the check that a schedule's tags fit the transport:
// transports say how far their tags go (Transport::max_tag), the executor refuses at construction a schedule
// that needs more, and Executor::largest_tag bounds every tag a real step uses.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/mpi_transport.h"
#include "core/comm/staged_transport.h"
#include "core/common/error.h"
#include "core/config/config.h"
#include "core/model/builder.h"
#include "core/model/stage_module.h"
#include "core/runtime/executor.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::runtime {
namespace {

// Completes every transfer at once (receives read zeros) and remembers the largest tag it was given.
class RecordingTransport : public comm::Transport {
 public:
  RecordingTransport(int rank, int size, int max_tag) : rank_(rank), size_(size), max_tag_(max_tag) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int max_tag() const override { return max_tag_; }
  std::unique_ptr<comm::Request> isend(const float*, int64_t, int, int tag) override { return done(tag); }
  std::unique_ptr<comm::Request> irecv(float* data, int64_t count, int, int tag) override {
    std::fill(data, data + count, 0.0f);
    return done(tag);
  }
  int largest_used() const { return largest_used_; }

 private:
  struct Done : comm::Request {
    void wait() override {}
    bool test() override { return true; }
  };
  std::unique_ptr<comm::Request> done(int tag) {
    largest_used_ = std::max(largest_used_, tag);
    return std::make_unique<Done>();
  }
  int rank_, size_, max_tag_;
  int largest_used_ = -1;
};

// One linear layer per stage, the stages of `rank` only.
struct RankStages {
  std::map<int, std::unique_ptr<model::StageModule>> owned;
  std::map<int, model::StageModule*> raw;
};

RankStages stages_of(const schedule::Schedule& lowered, int rank) {
  kernels::Backend& backend = kernels::cpu_backend();
  config::ModelSpec spec;
  spec.inputs = 3;
  for (int s = 0; s < lowered.num_stages(); ++s) {
    config::LayerSpec linear;
    linear.type = config::LayerType::kLinear;
    linear.outputs = 3;
    spec.layers.push_back(linear);
  }
  auto layers = model::build_layers(spec, backend);
  RankStages stages;
  for (int s = 0; s < lowered.num_stages(); ++s) {
    if (lowered.stage_to_rank[s] != rank) continue;
    std::vector<std::unique_ptr<model::Layer>> mine;
    mine.push_back(std::move(layers[s]));
    model::init_layers(mine, 1);
    stages.owned[s] = std::make_unique<model::StageModule>(backend, s, std::move(mine));
    stages.raw[s] = stages.owned[s].get();
  }
  return stages;
}

double no_loss(const kernels::Tensor&, const float*, int64_t, kernels::Tensor&) { return 0.0; }

std::unique_ptr<Executor> build(const schedule::Schedule& lowered, int rank, RankStages& stages,
                                comm::Transport& transport) {
  return std::make_unique<Executor>(lowered, rank, stages.raw, kernels::cpu_backend(), transport, no_loss,
                                    [](int) {});
}

TEST(ExecutorTagBound, LargestTagIsTheLayoutsBound) {
  // Tags are unique per (receiving stage, micro-batch, direction): 2 x M x stages of them, from 0.
  EXPECT_EQ(Executor::largest_tag(schedule::make_schedule("1f1b", 4, 8)), 2 * 8 * 4 - 1);
  EXPECT_EQ(Executor::largest_tag(schedule::make_schedule("interleaved", 2, 4, 3)), 2 * 4 * 6 - 1);
}

TEST(ExecutorTagBound, ConstructionRefusesTagsBeyondTheTransportsBound) {
  // 2 stages x 25 micro-batches need tags 0..99.
  const schedule::Schedule fits = schedule::lower(schedule::make_schedule("1f1b", 2, 25));
  const schedule::Schedule too_many = schedule::lower(schedule::make_schedule("1f1b", 2, 26));
  RankStages stages = stages_of(fits, 0);
  RecordingTransport transport(0, 2, 99);
  EXPECT_NO_THROW(build(fits, 0, stages, transport));
  try {
    build(too_many, 0, stages, transport);
    ADD_FAILURE() << "accepted tags up to 103 over a transport allowing 99";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConfig);
    EXPECT_EQ(std::string(e.what()),
              "pipeline.microbatches (26) x 2 stages needs message tags up to 103 but this MPI allows only 99; "
              "use fewer micro-batches or chunks");
  }
}

TEST(ExecutorTagBound, EveryTagAStepUsesIsWithinTheBound) {
  for (const char* name : {"1f1b", "interleaved", "zb-v"}) {
    const int chunks = std::string(name) == "1f1b" ? 1 : 2;
    const schedule::Schedule lowered = schedule::lower(schedule::make_schedule(name, 3, 6, chunks));
    int largest_used = -1;
    for (int rank = 0; rank < lowered.ranks; ++rank) {
      RankStages stages = stages_of(lowered, rank);
      RecordingTransport transport(rank, lowered.ranks, 32767);
      auto executor = build(lowered, rank, stages, transport);
      const std::vector<float> inputs(6 * 3, 0.5f), targets(6 * 3, 0.0f);
      StepData data;
      data.inputs = inputs.data();
      data.targets = targets.data();
      data.rows = 6;
      data.input_features = data.target_features = 3;
      data.global_batch = 6;
      StepCounters counters;
      EXPECT_FALSE(executor->run(data, counters, false).error) << name << " rank " << rank;
      largest_used = std::max(largest_used, transport.largest_used());
    }
    // The last stage's input for the last micro-batch is the highest tag actually sent.
    EXPECT_LE(largest_used, Executor::largest_tag(lowered)) << name;
    EXPECT_GE(largest_used, Executor::largest_tag(lowered) - 1) << name << ": the bound is loose";
  }
}

TEST(ExecutorTagBound, MpiTransportsAnswerMpiTagUb) {
  int* world_bound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &world_bound, &found);
  ASSERT_TRUE(found && world_bound != nullptr);
  ASSERT_GE(*world_bound, 32767);  // what MPI promises
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm split = MPI_COMM_NULL;  // like the pipeline communicator: a split of the world
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
  {
    comm::MpiTransport mpi(split);
    EXPECT_EQ(mpi.max_tag(), *world_bound);
    comm::StagedTransport staged(mpi, kernels::cpu_backend().host_staging());
    EXPECT_EQ(staged.max_tag(), *world_bound);  // its messages are the host transport's
  }
  MPI_Comm_free(&split);
}

}  // namespace
}  // namespace sluice::runtime
