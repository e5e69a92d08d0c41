// Recompute on a domain-split field (issue 32, pipeline.recompute_halos; docs/DOMAIN.md "Recompute and halos"): a
// small U-Net StageModule built from a config on each rank's block of an uneven 2 x 2 split (4 MPI ranks) — conv
// 3x3 periodic, GELU kept as a skip, max pool, conv 3x3, LINEAR upsampling (a halo layer without parameters), concat,
// conv 1x1 — runs one step of 2 micro-batches (F0 F1, then B0, then I1 and W1) under full and selective recompute
// with both settings. Every run gives the one-block, no-recompute run's outputs, losses, input and parameter
// gradients bit for bit. The halo channel's counters tell the schedules apart: with `stash` the step sends exactly
// the messages and bytes of the run without recompute (the recomputed forwards reuse the kept padded inputs), with
// `exchange` more (they fill their halos again); and the stash holds exactly the halo layers' padded inputs more.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/config/halo_stash.h"
#include "core/config/recompute_halos.h"
#include "core/model/builder.h"
#include "core/model/loss.h"
#include "core/model/stage_module.h"
#include "core/runtime/block_domain.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/random_tensor.h"
#include "tests/runtime/domain_runs.h"

namespace sluice::runtime {
namespace {

using config::RecomputeHalos;
using kernels::random_tensor;
using kernels::Tensor;
using model::RecomputeMode;

const Split kUneven2d{{16, 16}, {4, 4}, {{8, 8}, {4, 12}}};
constexpr int64_t kSamples = 2, kIn = 3, kHidden = 3, kOut = 2;

// Layers 0 (conv 3x3), 3 (conv 3x3 at the pooled level) and 4 (linear upsampling) fill halos of width 1; layer 6
// (conv 1x1) fills one of width 0 (a copy, no message). Layers 3 and 4 ride inside the skip's carriers.
const char* const kUnetConfig = R"(model:
  inputs: [3, 16, 16]
  layers:
    - {type: conv, channels: 3, kernel: 3, padding: periodic}
    - {type: gelu, name: s}
    - {type: pool, kernel: 2, mode: max}
    - {type: conv, channels: 3, kernel: 3, padding: periodic}
    - {type: upsample, factor: 2, mode: linear}
    - {type: concat, from: s}
    - {type: conv, channels: 2, kernel: 1}
data: {type: synthetic, batch: 2}
)";

struct StepResults {
  std::vector<Tensor> y, dx;
  std::vector<double> losses;
  std::vector<Tensor> grads;        // every parameter's, in the stage's order
  comm::HaloTraffic halos;          // this step's halo fills, as the channel counts them
  size_t stashed_after_forward = 0;  // StageModule::stashed_bytes once both forwards ran
};

StepResults run_step(kernels::Backend& backend, FieldRun& run, const model::RecomputePolicy& policy,
                     bool whole_field) {
  const config::Config cfg = config::parse_config(kUnetConfig);
  BlockDomain domain(run.field());
  std::vector<std::unique_ptr<model::Layer>> layers = model::build_layers(
      cfg.model, backend, {}, 0, static_cast<int>(cfg.model.layers.size()), config::input_shape_of(cfg.model),
      &domain);
  model::init_layers(layers, 7);
  model::StageModule stage(backend, 0, std::move(layers), policy, true, false);
  stage.zero_grad();
  const comm::HaloTraffic before = run.channel().totals();
  const int64_t points = points_of(kUneven2d.global);
  const auto cut = [&](const Tensor& t, int64_t channels) {
    return whole_field ? t : cut_block(t, channels, run.field().grid());
  };
  StepResults r;
  std::vector<Tensor> grads;
  for (int m = 0; m < 2; ++m) {
    const unsigned seed = static_cast<unsigned>(m);
    r.y.push_back(stage.forward(m, cut(random_tensor(kSamples, kIn * points, 10 + seed), kIn), {3, 0, true, 0}));
    const Tensor target = cut(random_tensor(kSamples, kOut * points, 20 + seed), kOut);
    model::LossResult loss =
        model::compute_domain_loss(backend, domain, model::LossKind::kMse, kOut, r.y.back(), target, 2 * kSamples);
    r.losses.push_back(loss.sum);
    grads.push_back(std::move(loss.grad));
  }
  r.stashed_after_forward = stage.stashed_bytes();
  r.dx.push_back(stage.backward(0, grads[0]));
  r.dx.push_back(stage.backward_input(1, grads[1]));
  stage.backward_weight(1);
  stage.finish_domain_step();
  for (model::Parameter* p : stage.parameters()) r.grads.push_back(p->grad);
  r.halos.bytes_sent = run.channel().totals().bytes_sent - before.bytes_sent;
  r.halos.messages_sent = run.channel().totals().messages_sent - before.messages_sent;
  return r;
}

void expect_same_step(const StepResults& got, const StepResults& whole, const Runs& runs, const std::string& what) {
  for (size_t m = 0; m < 2; ++m) {
    const std::string mb = ", micro-batch " + std::to_string(m) + " (" + what + ")";
    expect_bits(got.y[m], runs.cut(whole.y[m], kOut), "stage output" + mb);
    EXPECT_EQ(std::memcmp(&got.losses[m], &whole.losses[m], sizeof(double)), 0)
        << "loss" << mb << ": " << got.losses[m] << " vs " << whole.losses[m];
    expect_bits(got.dx[m], runs.cut(whole.dx[m], kIn), "input gradient" + mb);
  }
  ASSERT_EQ(got.grads.size(), whole.grads.size()) << what;
  ASSERT_EQ(got.grads.size(), 6u) << what;
  for (size_t i = 0; i < got.grads.size(); ++i) {
    expect_bits(got.grads[i], whole.grads[i], "parameter gradient " + std::to_string(i) + " (" + what + ")");
  }
}

// Bytes of one micro-batch's padded inputs of the given halo layers on this rank's block: what `stash` keeps more.
size_t padded_input_bytes(const kernels::Block& block, const std::vector<int>& layers) {
  const std::vector<int64_t>& e = block.extent;
  const int64_t fine = (e[0] + 2) * (e[1] + 2) * kIn;                   // layer 0: width 1 at the input's level
  const int64_t coarse = (e[0] / 2 + 2) * (e[1] / 2 + 2) * kHidden;     // layers 3, 4: width 1 at the pooled level
  const int64_t joined = e[0] * e[1] * 2 * kHidden;                     // layer 6: width 0
  int64_t floats = 0;
  for (const int layer : layers) floats += layer == 0 ? fine : layer == 6 ? joined : coarse;
  return static_cast<size_t>(floats * kSamples) * sizeof(float);
}

struct RecomputeCase {
  const char* name;
  RecomputeMode mode;
  std::vector<int> layers;       // selective: the dropped layers
  std::vector<int> halo_layers;  // the dropped layers that fill halos
};

void PrintTo(const RecomputeCase& c, std::ostream* os) { *os << c.name; }

class DomainRecomputeTest : public ::testing::TestWithParam<RecomputeCase> {};

TEST_P(DomainRecomputeTest, StashSendsNoMoreThanTheRunWithoutRecomputeAndBothGiveItsBits) {
  kernels::CpuBackend backend;
  Runs runs(kUneven2d);
  const RecomputeCase& c = GetParam();
  const StepResults whole = run_step(backend, *runs.whole, model::recompute_policy(RecomputeMode::kNone, {}), true);
  const StepResults plain =
      run_step(backend, runs.domain, model::recompute_policy(RecomputeMode::kNone, {}), false);
  expect_same_step(plain, whole, runs, "split, no recompute");
  ASSERT_GT(plain.halos.messages_sent, 0);

  const StepResults exchanged =
      run_step(backend, runs.domain, model::recompute_policy(c.mode, c.layers, RecomputeHalos::kExchange), false);
  expect_same_step(exchanged, whole, runs, std::string(c.name) + ", exchange");
  EXPECT_GT(exchanged.halos.messages_sent, plain.halos.messages_sent) << "the recomputed forwards fill halos again";
  EXPECT_GT(exchanged.halos.bytes_sent, plain.halos.bytes_sent);

  const StepResults stashed =
      run_step(backend, runs.domain, model::recompute_policy(c.mode, c.layers, RecomputeHalos::kStash), false);
  expect_same_step(stashed, whole, runs, std::string(c.name) + ", stash");
  EXPECT_EQ(stashed.halos.messages_sent, plain.halos.messages_sent) << "a recomputed forward sent halo messages";
  EXPECT_EQ(stashed.halos.bytes_sent, plain.halos.bytes_sent);
  // Two micro-batches stashed, each with its halo layers' padded inputs besides what `exchange` keeps.
  EXPECT_EQ(stashed.stashed_after_forward,
            exchanged.stashed_after_forward + 2 * padded_input_bytes(runs.domain.block(), c.halo_layers));
  // The memory planners' number for the dropped layers (config::halo_input_bytes, what sluice plan and schedule auto
  // add) is what the stage kept.
  const config::Config cfg = config::parse_config(kUnetConfig);
  const kernels::Block& block = runs.domain.block();
  const std::vector<double> planned =
      config::halo_input_bytes(cfg.model.layers, config::input_shape_of(cfg.model), {block.offset, block.extent});
  double dropped = 0.0;
  for (const int layer : c.halo_layers) dropped += planned.at(static_cast<size_t>(layer));
  double planned_halo_layers = 0.0;  // every layer the planner says fills a halo
  for (const double bytes : planned) planned_halo_layers += bytes > 0.0 ? 1.0 : 0.0;
  EXPECT_EQ(planned_halo_layers, 4.0) << "layers 0, 3, 4 and 6 fill halos";
  EXPECT_EQ(static_cast<double>(stashed.stashed_after_forward - exchanged.stashed_after_forward),
            2.0 * static_cast<double>(kSamples) * dropped)
      << "the planners' halo stash";
}

INSTANTIATE_TEST_SUITE_P(
    Recompute, DomainRecomputeTest,
    ::testing::Values(RecomputeCase{"full", RecomputeMode::kFull, {}, {0, 3, 4, 6}},
                      // The pooled conv and the upsampling: both inside the skip's carriers.
                      RecomputeCase{"selective", RecomputeMode::kSelective, {3, 4}, {3, 4}}),
    [](const ::testing::TestParamInfo<RecomputeCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace sluice::runtime
