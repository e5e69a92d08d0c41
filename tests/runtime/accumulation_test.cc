// Gradient accumulation across train_step calls (optimizer.accumulate = K), run with 4 MPI ranks:
// - K calls of B rows (M micro-batches each) give the same parameters and optimizer state as one call of K*B
//   rows with K*M micro-batches and accumulate 1, for every schedule, with dropout (so the calls must draw the big
//   call's masks: masks are keyed by global sample index) and clipping (so the norm must be taken over the
//   window's full sums), over two windows: bit for bit with 1 replica (4 stages), within 1e-6 relative with 2
//   replicas (2 stages x 2), where the two runs add the same samples in another order (see window_data);
// - a checkpoint saved in the middle of a window stores the partial sums; a fresh trainer that loads it and
//   finishes the window ends bit-identical to an uninterrupted run;
// - a mid-window checkpoint is refused under another accumulate;
// - under another replica count (2 -> 1, 1 -> 2, 2 stages) it continues the window from the saved replicas' summed
//   partial sums, within 1e-6 relative of the uninterrupted run (only the summation order differs);
// - a call that fails drops its window on every rank: what follows equals a run that never had that window;
// - the comparison is sensitive: the same calls with accumulate 1 (three optimizer steps) differ.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/reader.h"
#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/data/synthetic_data.h"
#include "core/model/builder.h"
#include "core/model/layer.h"
#include "core/runtime/trainer.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tests/mpi_world.h"
#include "tests/runtime/schedule_cases.h"

namespace sluice {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

constexpr int kAccumulate = 3;
constexpr int kMicrobatches = 4;  // per call
constexpr int64_t kRows = 8;      // per replica and call
constexpr int kWindows = 2;

std::string shared_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string config_yaml(int stages, const std::string& schedule, int chunks, int dp, int microbatches,
                        int accumulate, int64_t replica_batch, bool flaky) {
  return "model:\n  inputs: 10\n  layers:\n"
         "    - {type: linear, outputs: 16}\n    - {type: gelu}\n" +
         std::string(flaky ? "    - {type: custom, name: flaky}\n" : "") + "    - {type: dropout, p: 0.2}\n"
         "    - {type: linear, outputs: 16}\n    - {type: layernorm}\n"
         "    - {type: residual_mlp, hidden: 20, activation: tanh}\n    - {type: dropout, p: 0.1}\n"
         "    - {type: linear, outputs: 12}\n    - {type: tanh}\n    - {type: linear, outputs: 4}\n"
         "pipeline: {stages: " + std::to_string(stages) + ", schedule: " + schedule +
         ", chunks: " + std::to_string(chunks) + ", microbatches: " + std::to_string(microbatches) +
         "}\nloss: mse\n"
         "optimizer: {type: adamw, lr: 0.01, weight_decay: 0.01, clip_grad_norm: 0.5, accumulate: " +
         std::to_string(accumulate) + "}\n" +
         "data: {type: external, batch: " + std::to_string(replica_batch * dp) + "}\nseed: 11\nsteps: 5\n";
}

// All 4 ranks: stages = 4 / dp.
config::Config make_config(const std::string& schedule, int chunks, int dp, int microbatches, int accumulate,
                           int64_t replica_batch, bool flaky = false) {
  return config::parse_config(
      config_yaml(world_size() / dp, schedule, chunks, dp, microbatches, accumulate, replica_batch, flaky));
}

// Window w's samples, all replicas, in stream order: the samples' positions in the stream of samples since step 0
// (which key dropout) are w*K*B*R + row. The K small calls read it as `sluice train` and the API feed data, call
// after call: call k's global batch is rows [k*B*R, (k+1)*B*R), replica r its rows from k*B*R + r*B. The big call
// is one global batch of K*B*R rows: replica r takes rows [r*K*B, (r+1)*K*B). So every sample has the same global
// index (hence the same dropout mask) in both runs. With 1 replica both read the rows in the same order and the
// runs agree bit for bit. With R > 1 they cannot: the big call's replica r adds the window rows
// [r*K*B, (r+1)*K*B), the small calls' replica r adds B rows of every call, so the summation order differs; and
// reordering the big call's rows to restore that order would move samples to other global indices (other masks).
// Keying by global sample index prefers the data stream order, so 2 replicas agree within rounding (1e-6).
struct Window {
  std::vector<float> inputs, targets;
};

Window window_data(const runtime::Trainer& t, int w) {
  const int64_t rows = kRows * kAccumulate * t.layout().data_parallel;
  data::SyntheticData source(t.config().seed, t.parts().input_features, t.parts().output_features, data::TargetKind::kRegression);
  Window b{std::vector<float>(rows * t.parts().input_features), std::vector<float>(rows * t.parts().output_features)};
  source.batch(w, 0, rows, b.inputs.data(), b.targets.data());
  return b;
}

// Call `call` (0-based over the run) of an accumulating trainer: B rows.
runtime::StepResult small_call(runtime::Trainer& t, int call) {
  const Window b = window_data(t, call / kAccumulate);
  const int64_t first = ((call % kAccumulate) * t.layout().data_parallel + t.layout().replica) * kRows;
  return t.train_step(b.inputs.data() + first * t.parts().input_features, b.targets.data() + first * t.parts().output_features,
                      kRows);
}

// Window w in one call of K*B rows.
runtime::StepResult big_call(runtime::Trainer& t, int w) {
  const Window b = window_data(t, w);
  const int64_t first = t.layout().replica * kAccumulate * kRows;
  return t.train_step(b.inputs.data() + first * t.parts().input_features, b.targets.data() + first * t.parts().output_features,
                      kAccumulate * kRows);
}

// Parameters and optimizer state by name, as host bytes.
std::map<std::string, std::vector<float>> state_of(runtime::Trainer& t) {
  std::map<std::string, std::vector<float>> state;
  for (const auto& [index, stage] : t.parts().stages) {
    for (model::Parameter* p : stage->parameters()) {
      state[p->qualified_name()].assign(p->value.data(), p->value.data() + p->value.size());
    }
  }
  for (const model::NamedTensor& s : t.parts().optimizer->state_tensors()) {
    state[s.name].assign(s.tensor->data(), s.tensor->data() + s.tensor->size());
  }
  return state;
}

// Every rank compares its own share; the verdict is agreed so that all ranks pass or fail together. Returns the
// number of differing tensors over all ranks (and the elements compared, through `compared`).
int count_differences(const std::map<std::string, std::vector<float>>& a,
                      const std::map<std::string, std::vector<float>>& b, int64_t* compared = nullptr) {
  int differing = a.size() == b.size() ? 0 : 1;
  int64_t elements = 0;
  for (const auto& [name, values] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second.size() != values.size() ||
        std::memcmp(values.data(), it->second.data(), values.size() * sizeof(float)) != 0) {
      ++differing;
    }
    elements += static_cast<int64_t>(values.size());
  }
  int total = 0;
  MPI_Allreduce(&differing, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int64_t all_elements = 0;
  MPI_Allreduce(&elements, &all_elements, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (compared) *compared = all_elements;
  return total;
}

// The largest, over all tensors and ranks, of max|a - b| / max|b| per tensor (agreed across ranks); infinity when
// the tensor sets differ.
double max_relative_difference(const std::map<std::string, std::vector<float>>& a,
                               const std::map<std::string, std::vector<float>>& b) {
  double worst = a.size() == b.size() ? 0.0 : HUGE_VAL;
  for (const auto& [name, values] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second.size() != values.size()) {
      worst = HUGE_VAL;
      continue;
    }
    double diff = 0.0, scale = 0.0;
    for (size_t i = 0; i < values.size(); ++i) {
      diff = std::max(diff, std::abs(static_cast<double>(values[i]) - it->second[i]));
      scale = std::max(scale, std::abs(static_cast<double>(it->second[i])));
    }
    worst = std::max(worst, scale > 0.0 ? diff / scale : diff);
  }
  double all = 0.0;
  MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

using Param = std::tuple<testing::ScheduleCase, int>;  // (schedule, data-parallel replicas)

class Accumulation : public ::testing::TestWithParam<Param> {};

TEST_P(Accumulation, KCallsEqualOneCallOfKTimesTheBatch) {
  const auto& [c, dp] = GetParam();
  runtime::Trainer small(MPI_COMM_WORLD, make_config(c.schedule, c.chunks, dp, kMicrobatches, kAccumulate, kRows));
  small.start();
  runtime::Trainer big(MPI_COMM_WORLD,
                       make_config(c.schedule, c.chunks, dp, kAccumulate * kMicrobatches, 1, kAccumulate * kRows));
  big.start();
  for (int w = 0; w < kWindows; ++w) {
    double small_losses = 0.0;
    for (int k = 0; k < kAccumulate; ++k) {
      const runtime::StepResult r = small_call(small, w * kAccumulate + k);
      const bool last = k + 1 == kAccumulate;
      EXPECT_EQ(r.stepped, last) << "call " << k;
      EXPECT_EQ(r.pending_calls, last ? 0 : k + 1);
      EXPECT_EQ(r.step, static_cast<uint64_t>(last ? w + 1 : w));
      EXPECT_EQ(small.steps_done(), r.step);
      EXPECT_EQ(small.state().accumulation_position, r.pending_calls);
      small_losses += r.loss;
    }
    const runtime::StepResult whole = big_call(big, w);
    EXPECT_TRUE(whole.stepped);
    // Each call reports the mean over its own samples: their average is the window's mean (up to rounding; with 2
    // replicas the parameters after the first window already differ by rounding, see window_data).
    const double tolerance = dp == 1 || w == 0 ? 1e-9 : 1e-6;
    EXPECT_NEAR(small_losses / kAccumulate, whole.loss, tolerance * std::abs(whole.loss)) << "window " << w;
  }
  EXPECT_EQ(small.parts().optimizer->step_count(), big.parts().optimizer->step_count());
  int64_t compared = 0;
  const int differing = count_differences(state_of(small), state_of(big), &compared);
  EXPECT_GT(compared, 0);
  if (dp == 1) {
    EXPECT_EQ(differing, 0) << "parameters or optimizer state differ from the single big call";
  } else {
    // Same samples, same masks, another summation order (see window_data).
    EXPECT_LE(max_relative_difference(state_of(small), state_of(big)), 1e-6)
        << "parameters or optimizer state differ from the single big call beyond rounding";
  }
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, Accumulation, ::testing::Combine(testing::all_schedules(), ::testing::Values(1, 2)),
                         [](const auto& info) {
                           return testing::identifier(std::get<0>(info.param).schedule + "_dp" +
                                                      std::to_string(std::get<1>(info.param)));
                         });

// The comparison above can fail: the same calls with accumulate 1 take three optimizer steps per window.
TEST(AccumulationSensitivity, StepsOnEveryCallDifferFromTheBigCall) {
  runtime::Trainer every(MPI_COMM_WORLD, make_config("1f1b", 1, 1, kMicrobatches, 1, kRows));
  every.start();
  runtime::Trainer big(MPI_COMM_WORLD, make_config("1f1b", 1, 1, kAccumulate * kMicrobatches, 1, kAccumulate * kRows));
  big.start();
  for (int k = 0; k < kAccumulate; ++k) small_call(every, k);
  big_call(big, 0);
  EXPECT_GT(count_differences(state_of(every), state_of(big)), 0);
}

class AccumulationRestart : public ::testing::TestWithParam<Param> {};

// Save after call 1 of the second window (one optimizer step done, one call's partial sums pending), load into a
// fresh trainer, finish: bit-identical to the uninterrupted run.
TEST_P(AccumulationRestart, MidWindowCheckpointContinuesTheWindowExactly) {
  const auto& [c, dp] = GetParam();
  const config::Config cfg = make_config(c.schedule, c.chunks, dp, kMicrobatches, kAccumulate, kRows);
  const int total = kWindows * kAccumulate;
  const int stop_after = kAccumulate + 1;
  runtime::Trainer uninterrupted(MPI_COMM_WORLD, cfg);
  uninterrupted.start();
  for (int call = 0; call < total; ++call) small_call(uninterrupted, call);

  const std::string path = shared_path("accum_" + testing::identifier(c.schedule) + "_dp" + std::to_string(dp) + ".h5");
  {
    runtime::Trainer first(MPI_COMM_WORLD, cfg);
    first.start();
    for (int call = 0; call < stop_after; ++call) small_call(first, call);
    ASSERT_EQ(first.state().accumulation_position, 1);
    runtime::save_checkpoint(first, path);
  }
  if (world_rank() == 0) {
    // The file holds every replica's partial sums and the window position.
    checkpoint::Reader reader(path);
    EXPECT_EQ(reader.train_int("accumulation_position"), 1);
    EXPECT_EQ(reader.train_int("accumulation_replicas"), dp);
    int per_replica[2] = {0, 0};
    for (const std::string& p : reader.paths()) {
      if (p.rfind("/accumulation/", 0) != 0) continue;
      for (int r = 0; r < dp; ++r) per_replica[r] += p.size() > 10 && p.substr(p.rfind('/')) == "/replica_" + std::to_string(r);
    }
    EXPECT_GT(per_replica[0], 0);
    if (dp == 2) EXPECT_EQ(per_replica[0], per_replica[1]);
  }
  runtime::Trainer resumed(MPI_COMM_WORLD, cfg);
  resumed.start();
  runtime::load_checkpoint(resumed, path);
  EXPECT_EQ(resumed.state().accumulation_position, 1);
  EXPECT_EQ(resumed.steps_done(), 1u);
  for (int call = stop_after; call < total; ++call) small_call(resumed, call);
  EXPECT_EQ(resumed.steps_done(), static_cast<uint64_t>(kWindows));
  EXPECT_EQ(count_differences(state_of(resumed), state_of(uninterrupted)), 0)
      << "a restart in the middle of a window changed the result";

  if (world_rank() == 0) std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Schedules, AccumulationRestart,
                         ::testing::Combine(::testing::Values(testing::ScheduleCase{"1f1b", 1},
                                                              testing::ScheduleCase{"zb-v", 2}),
                                            ::testing::Values(1, 2)),
                         [](const auto& info) {
                           return testing::identifier(std::get<0>(info.param).schedule + "_dp" +
                                                      std::to_string(std::get<1>(info.param)));
                         });

// An identity layer that throws in its forward while `g_fail` is set: a failure on the ranks that hold it only.
bool g_fail = false;

class FlakyLayer : public model::Layer {
 public:
  explicit FlakyLayer(int64_t features) : features_(features) {}
  std::string type() const override { return "flaky"; }
  int64_t in_features() const override { return features_; }
  int64_t out_features() const override { return features_; }
  double flops_per_sample() const override { return 1.0; }
  kernels::Tensor forward(kernels::Tensor x, const model::ForwardContext&, model::LayerSaved&) override {
    if (g_fail) throw Error(ErrorCode::kCallback, "flaky layer failed on purpose");
    return x;
  }
  kernels::Tensor backward_input(const kernels::Tensor& dy, model::LayerSaved&) override { return dy; }

 private:
  int64_t features_;
};

model::CustomLayerRegistry flaky_registry() {
  model::CustomLayerRegistry registry;
  registry["flaky"] = [](int64_t in) { return std::make_unique<FlakyLayer>(in); };
  return registry;
}

// Call 0 of a window succeeds, call 1 fails on the ranks holding the flaky layer: every rank throws, the window is
// dropped (call 0's sums too), and the next three calls form a new window that equals a run without the failed one.
TEST(AccumulationFailure, AFailedCallDropsTheWindowOnEveryRank) {
  const config::Config cfg = make_config("1f1b", 1, 1, kMicrobatches, kAccumulate, kRows, true);
  runtime::Trainer failing(MPI_COMM_WORLD, cfg, flaky_registry());
  failing.start();
  runtime::Trainer clean(MPI_COMM_WORLD, cfg, flaky_registry());
  clean.start();
  EXPECT_FALSE(small_call(failing, 0).stepped);
  g_fail = true;
  std::string message;
  try {
    small_call(failing, 1);
  } catch (const Error& e) {
    message = e.what();
  }
  g_fail = false;
  EXPECT_NE(message.find("flaky layer failed on purpose"), std::string::npos) << message;
  if (message.find("(on rank") != std::string::npos) {  // the ranks that did not fail name the window's fate
    EXPECT_NE(message.find("call 2 of 3 (no update applied; the window's earlier calls are dropped)"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(failing.state().accumulation_position, 0);
  EXPECT_EQ(failing.steps_done(), 0u);
  for (int call = kAccumulate; call < 2 * kAccumulate; ++call) {
    small_call(failing, call);
    small_call(clean, call);
  }
  EXPECT_EQ(failing.steps_done(), 1u);
  EXPECT_EQ(count_differences(state_of(failing), state_of(clean)), 0)
      << "the failed window's partial sums leaked into the next window";
}

std::string load_error(const config::Config& cfg, const std::string& path) {
  runtime::Trainer t(MPI_COMM_WORLD, cfg);
  t.start();
  try {
    runtime::load_checkpoint(t, path);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCheckpoint) << e.what();
    EXPECT_EQ(t.state().accumulation_position, 0);
    return e.what();
  }
  ADD_FAILURE() << "the load was accepted";
  return "";
}

TEST(AccumulationRestart, MidWindowCheckpointNeedsTheSameAccumulate) {
  const std::string path = shared_path("accum_refused.h5");
  {
    runtime::Trainer t(MPI_COMM_WORLD, make_config("1f1b", 1, 2, kMicrobatches, kAccumulate, kRows));
    t.start();
    small_call(t, 0);
    runtime::save_checkpoint(t, path);
  }
  EXPECT_NE(load_error(make_config("1f1b", 1, 2, kMicrobatches, 2, kRows), path)
                .find("a restart in the middle of a window must keep optimizer.accumulate"),
            std::string::npos);
  if (world_rank() == 0) std::remove(path.c_str());
}

// --- Another replica count in the middle of a window (2 stages: 1 replica on ranks 0-1, 2 replicas on 0-3) ---

constexpr int64_t kGlobalRows = 16;  // per call, under every replica count (data.batch is fixed across restarts)

// Runs `body` on a started trainer of 2 stages x dp replicas: 2 * dp ranks, the others wait at the barrier.
void on_replicas(int dp, const std::function<void(runtime::Trainer&)>& body) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < 2 * dp ? 0 : MPI_UNDEFINED, world_rank(), &comm);
  if (comm != MPI_COMM_NULL) {
    {
      runtime::Trainer t(comm, config::parse_config(config_yaml(2, "1f1b", 1, dp, kMicrobatches, kAccumulate,
                                                                kGlobalRows / dp, false)));
      t.start();
      body(t);
    }
    MPI_Comm_free(&comm);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Call `call` (0-based over the run) as the stream feeds it under any replica count: call k's global batch is
// rows [k*G, (k+1)*G) of its window, replica r takes G/dp rows from k*G + r*G/dp.
void stream_call(runtime::Trainer& t, int call) {
  const int64_t rows = kGlobalRows / t.layout().data_parallel;
  const int64_t window_rows = kGlobalRows * kAccumulate;
  data::SyntheticData source(t.config().seed, t.parts().input_features, t.parts().output_features, data::TargetKind::kRegression);
  std::vector<float> x(window_rows * t.parts().input_features), y(window_rows * t.parts().output_features);
  source.batch(call / kAccumulate, 0, window_rows, x.data(), y.data());
  const int64_t first = (call % kAccumulate) * kGlobalRows + t.layout().replica * rows;
  t.train_step(x.data() + first * t.parts().input_features, y.data() + first * t.parts().output_features, rows);
}

// max over /model and /optimizer datasets of max|a - b| / max|b|, read on rank 0 (the files are keyed by global
// layer, so two layouts compare directly). Infinity when the dataset lists differ or are empty.
double relative_difference_of_files(const std::string& a, const std::string& b) {
  double worst = 0.0;
  if (world_rank() == 0) {
    const checkpoint::Reader ra(a), rb(b);
    std::vector<std::string> paths;
    for (const std::string& p : rb.paths()) {
      if (p.rfind("/model/", 0) == 0 || p.rfind("/optimizer/", 0) == 0) paths.push_back(p);
    }
    if (paths.empty()) worst = HUGE_VAL;
    for (const std::string& p : paths) {
      if (!ra.contains(p)) {
        worst = HUGE_VAL;
        continue;
      }
      const std::vector<float> va = ra.read(p).data, vb = rb.read(p).data;
      double diff = 0.0, scale = 0.0;
      for (size_t i = 0; i < vb.size(); ++i) {
        diff = std::max(diff, std::abs(static_cast<double>(va[i]) - vb[i]));
        scale = std::max(scale, std::abs(static_cast<double>(vb[i])));
      }
      worst = std::max(worst, scale > 0.0 ? diff / scale : diff);
    }
  }
  MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return worst;
}

using ReplicaChange = std::tuple<int, int>;  // (replicas that saved, replicas that resume)
class AccumulationReplicaChange : public ::testing::TestWithParam<ReplicaChange> {};

// Save after call 1 of the second window under `from` replicas, resume under `to`, finish: the window continues
// from the saved replicas' summed partial sums and ends within rounding of the uninterrupted run.
TEST_P(AccumulationReplicaChange, MidWindowCheckpointContinuesUnderAnotherReplicaCount) {
  const auto& [from, to] = GetParam();
  const int total = kWindows * kAccumulate;
  const int stop_after = kAccumulate + 1;
  const std::string tag = "dp" + std::to_string(from) + "_to_dp" + std::to_string(to);
  const std::string mid = shared_path("accum_mid_" + tag + ".h5");
  const std::string reference = shared_path("accum_ref_" + tag + ".h5");
  const std::string resumed = shared_path("accum_resumed_" + tag + ".h5");
  on_replicas(from, [&](runtime::Trainer& t) {
    for (int call = 0; call < total; ++call) stream_call(t, call);
    runtime::save_checkpoint(t, reference);
  });
  on_replicas(from, [&](runtime::Trainer& t) {
    for (int call = 0; call < stop_after; ++call) stream_call(t, call);
    runtime::save_checkpoint(t, mid);
  });
  on_replicas(to, [&](runtime::Trainer& t) {
    runtime::load_checkpoint(t, mid);
    EXPECT_EQ(t.state().accumulation_position, 1);
    EXPECT_EQ(t.steps_done(), 1u);
    for (int call = stop_after; call < total; ++call) stream_call(t, call);
    EXPECT_EQ(t.steps_done(), static_cast<uint64_t>(kWindows));
    runtime::save_checkpoint(t, resumed);
  });
  EXPECT_LE(relative_difference_of_files(resumed, reference), 1e-6)
      << "the window continued under " << to << " replicas differs from the uninterrupted run beyond rounding";
  // The comparison can fail: the mid-window file is one optimizer step behind.
  EXPECT_GT(relative_difference_of_files(mid, reference), 1e-4);
  if (world_rank() == 0) {
    for (const std::string& f : {mid, reference, resumed}) std::remove(f.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(TwoStages, AccumulationReplicaChange,
                         ::testing::Values(ReplicaChange{2, 1}, ReplicaChange{1, 2}), [](const auto& info) {
                           return "dp" + std::to_string(std::get<0>(info.param)) + "_to_dp" +
                                  std::to_string(std::get<1>(info.param));
                         });

// At a step boundary there is nothing to continue: accumulate may change, and a checkpoint without
// accumulation_position (older files) loads as position 0.
TEST(AccumulationRestart, BoundaryCheckpointLoadsUnderAnotherAccumulate) {
  const std::string path = shared_path("accum_boundary.h5");
  {
    runtime::Trainer t(MPI_COMM_WORLD, make_config("1f1b", 1, 1, kMicrobatches, 1, kRows));
    t.start();
    small_call(t, 0);
    runtime::save_checkpoint(t, path);
  }
  runtime::Trainer t(MPI_COMM_WORLD, make_config("1f1b", 1, 1, kMicrobatches, kAccumulate, kRows));
  t.start();
  small_call(t, 0);  // a pending call, dropped by the load
  runtime::load_checkpoint(t, path);
  EXPECT_EQ(t.state().accumulation_position, 0);
  EXPECT_EQ(t.steps_done(), 1u);
  EXPECT_FALSE(small_call(t, 1).stepped);
  if (world_rank() == 0) std::remove(path.c_str());
}

}  // namespace
}  // namespace sluice
