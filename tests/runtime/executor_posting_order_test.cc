// The executor under a transport with NCCL's ordering rules, on the CPU: transfers run strictly one after
// another in posting order, each blocking until its partner runs (MPI_Ssend / MPI_Recv executed in queue order
// when the host waits). A transport like that says receives_may_be_posted_early() == false, and the executor
// must then post every send and receive exactly in its rank's schedule order, which the lowering proves
// deadlock-free with blocking send/recv. Checked for every schedule on 4 ranks: the posting order equals the
// schedule's SEND/RECV order, the step finishes (a hang fails the test's time limit), and the gradients are
// bit-identical to the same step over the ordinary MPI transport.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/mpi_transport.h"
#include "core/config/config.h"
#include "core/model/builder.h"
#include "core/model/loss.h"
#include "core/model/partition.h"
#include "core/model/stage_module.h"
#include "core/runtime/executor.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/runtime/schedule_cases.h"

namespace sluice::runtime {
namespace {

using kernels::Tensor;

// NCCL's rules on host memory. The queue only advances when the host waits, which is enough: a rank blocked
// in wait() runs its queue up to that transfer, exactly as a blocking execution of its list would.
class InOrderBlockingTransport : public comm::Transport {
 public:
  struct Posted {
    bool send;
    int peer;
  };

  explicit InOrderBlockingTransport(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool receives_may_be_posted_early() const override { return false; }
  std::unique_ptr<comm::Request> isend(const float* data, int64_t count, int peer, int tag) override {
    return post(true, const_cast<float*>(data), count, peer, tag);
  }
  std::unique_ptr<comm::Request> irecv(float* data, int64_t count, int peer, int tag) override {
    return post(false, data, count, peer, tag);
  }
  const std::vector<Posted>& posted() const { return posted_; }

 private:
  struct Transfer {
    bool send;
    float* data;
    int64_t count;
    int peer;
    int tag;
    bool done = false;
  };

  class Request : public comm::Request {
   public:
    Request(InOrderBlockingTransport& transport, size_t index) : transport_(transport), index_(index) {}
    void wait() override { transport_.run_through(index_); }
    bool test() override { return transport_.queue_[index_].done; }  // never advances the queue, like a stream

   private:
    InOrderBlockingTransport& transport_;
    size_t index_;
  };

  std::unique_ptr<comm::Request> post(bool send, float* data, int64_t count, int peer, int tag) {
    queue_.push_back({send, data, count, peer, tag});
    posted_.push_back({send, peer});
    return std::make_unique<Request>(*this, queue_.size() - 1);
  }

  void run_through(size_t index) {
    for (; next_ <= index; ++next_) {
      Transfer& t = queue_[next_];
      // Synchronous send: completes only once the receive has started, as a large NCCL send does.
      const int rc = t.send ? MPI_Ssend(t.data, static_cast<int>(t.count), MPI_FLOAT, t.peer, t.tag, comm_)
                            : MPI_Recv(t.data, static_cast<int>(t.count), MPI_FLOAT, t.peer, t.tag, comm_,
                                       MPI_STATUS_IGNORE);
      ASSERT_EQ(rc, MPI_SUCCESS);
      t.done = true;
    }
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<Transfer> queue_;  // never shrinks within a step: requests refer to it by index
  size_t next_ = 0;
  std::vector<Posted> posted_;
};

config::ModelSpec model_spec() {
  config::ModelSpec spec;
  spec.inputs = 6;
  for (int outputs : {10, 9, 8, 7, 5}) {
    config::LayerSpec linear;
    linear.type = config::LayerType::kLinear;
    linear.outputs = outputs;
    config::LayerSpec gelu;
    gelu.type = config::LayerType::kGelu;
    spec.layers.push_back(linear);
    spec.layers.push_back(gelu);
  }
  return spec;
}

std::vector<float> random_values(size_t count, unsigned seed) {
  std::vector<float> values(count);
  unsigned state = seed;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return values;
}

// This rank's parameter gradients after one step of `schedule_name` over `transport`.
std::vector<std::vector<float>> one_step(const schedule::Schedule& lowered, comm::Transport& transport) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  kernels::Backend& backend = kernels::cpu_backend();
  auto layers = model::build_layers(model_spec(), backend);
  const std::vector<int> split = model::balanced_split(model::layer_costs(layers), lowered.num_stages());
  const std::vector<model::LayerRange> ranges = model::split_to_ranges(split);
  std::map<int, std::unique_ptr<model::StageModule>> owned;
  std::map<int, model::StageModule*> stages;
  for (int stage = 0; stage < lowered.num_stages(); ++stage) {
    if (lowered.stage_to_rank[stage] != rank) continue;
    std::vector<std::unique_ptr<model::Layer>> mine;
    for (int l = ranges[stage].first; l < ranges[stage].last; ++l) mine.push_back(std::move(layers[l]));
    model::init_layers(mine, 3);
    owned[stage] = std::make_unique<model::StageModule>(backend, ranges[stage].first, std::move(mine));
    stages[stage] = owned[stage].get();
  }
  const int64_t rows = 4 * lowered.microbatches;
  const std::vector<float> inputs = random_values(static_cast<size_t>(rows * 6), 1);
  const std::vector<float> targets = random_values(static_cast<size_t>(rows * 5), 2);
  auto loss = [&](const Tensor& out, const float* t, int64_t global_batch, Tensor& grad) {
    model::LossResult r = model::compute_loss(backend, model::LossKind::kMse, out,
                                              backend.from_host(out.rows(), out.cols(), t), global_batch);
    grad = std::move(r.grad);
    return r.sum;
  };
  Executor executor(lowered, rank, stages, backend, transport, loss, [](int) {});
  StepData data;
  data.inputs = inputs.data();
  data.targets = targets.data();
  data.rows = rows;
  data.input_features = 6;
  data.target_features = 5;
  data.global_batch = rows;
  data.seed = 5;
  data.step = 1;
  StepCounters counters;
  const StepOutcome outcome = executor.run(data, counters, false);
  EXPECT_FALSE(outcome.error);
  std::vector<std::vector<float>> grads;
  for (auto& [index, stage] : owned) {
    for (model::Parameter* p : stage->parameters()) grads.push_back(p->grad.to_vector());
  }
  return grads;
}

class ExecutorPostingOrder : public ::testing::TestWithParam<testing::ScheduleCase> {};

TEST_P(ExecutorPostingOrder, InScheduleOrderUnderBlockingInOrderTransfersAndSameGradients) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const testing::ScheduleCase& c = GetParam();
  const int microbatches = 2 * ranks;
  const schedule::Schedule lowered = schedule::lower(schedule::make_schedule(c.schedule, ranks, microbatches, c.chunks));

  comm::MpiTransport mpi(MPI_COMM_WORLD);
  const auto expected = one_step(lowered, mpi);
  InOrderBlockingTransport in_order(MPI_COMM_WORLD);
  const auto got = one_step(lowered, in_order);

  std::vector<std::string> schedule_order, posting_order;
  for (const schedule::Action& a : lowered.actions[rank]) {
    const bool send = a.kind == schedule::ActionKind::SEND_F || a.kind == schedule::ActionKind::SEND_B;
    const bool recv = a.kind == schedule::ActionKind::RECV_F || a.kind == schedule::ActionKind::RECV_B;
    if (!send && !recv) continue;
    const int peer_stage = a.kind == schedule::ActionKind::SEND_F || a.kind == schedule::ActionKind::RECV_B
                               ? a.stage + 1
                               : a.stage - 1;
    schedule_order.push_back(std::string(send ? "send to " : "receive from ") +
                             std::to_string(lowered.stage_to_rank[peer_stage]));
  }
  for (const auto& p : in_order.posted()) {
    posting_order.push_back(std::string(p.send ? "send to " : "receive from ") + std::to_string(p.peer));
  }
  EXPECT_EQ(posting_order, schedule_order) << "rank " << rank;
  ASSERT_FALSE(schedule_order.empty()) << "rank " << rank << " has no transfers: the check would be empty";

  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), expected[i].size());
    EXPECT_EQ(0, std::memcmp(got[i].data(), expected[i].data(), got[i].size() * sizeof(float)))
        << "rank " << rank << " parameter " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, ExecutorPostingOrder, testing::all_schedules(),
                         [](const auto& info) { return testing::identifier(info.param.schedule); });

}  // namespace
}  // namespace sluice::runtime
