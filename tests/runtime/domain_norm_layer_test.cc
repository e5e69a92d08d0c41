// The field norms and dropout as layers on a rank's block (issue 32 item 2): a StageModule conv 3x3 periodic ->
// group_norm (or instance_norm, or layernorm over the channels) -> GELU -> dropout(p = 0.25) -> conv 3x3 periodic ->
// field MSE, each layer built with the rank's FieldDomain level (core/runtime/block_domain.h), one step of 2
// micro-batches (a fused backward, then I and W) and finish_domain_step on 4 MPI ranks holding the blocks of an
// uneven 2 x 2 split, without and with full recompute (the norm gathers its statistics again, the dropout mask is
// drawn again). Against the same stage on ONE block (the whole field, one rank): outputs, losses, input gradients and
// every parameter gradient bit for bit; the one-block run against the plain layers (no domain) within rounding,
// which pins the dropout mask to the whole field's and the statistics to the field's. The same layers built from a
// config by model::build_layers on the blocks give the hand-built one-block bits. What they cannot run on a block (a
// norm whose geometry is not its level's, dropout over features that are not whole channels of the block) is refused
// by name.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/model/activation_layer.h"
#include "core/model/builder.h"
#include "core/model/conv_layer.h"
#include "core/model/dropout_layer.h"
#include "core/model/field_norm_layer.h"
#include "core/model/loss.h"
#include "core/model/stage_module.h"
#include "core/runtime/block_domain.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/random_tensor.h"
#include "tests/runtime/domain_runs.h"
#include "tests/runtime/domain_stage_step.h"

namespace sluice::runtime {
namespace {

using kernels::random_tensor;
using kernels::Tensor;
using model::Layer;

// Both dimensions split unevenly; 4 x 4 tiles.
const Split kSplit{{16, 16}, {4, 4}, {{12, 4}, {4, 12}}};
constexpr int64_t kSamples = 2, kIn = 3, kHidden = 4, kOut = 2;
constexpr float kDropout = 0.25f;

kernels::ConvGeometry periodic_conv(int64_t in_channels, int64_t out_channels) {
  kernels::ConvGeometry g;
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  g.in = kSplit.global;
  g.kernel = {3, 3};
  g.stride = g.dilation = {1, 1};
  g.pad_low = g.pad_high = {1, 1};
  return g;
}

// The norm layer of a case, its entry in a config's layer list.
struct NormCase {
  const char* name;  // the layer type
  model::FieldNormLayer::Over over;
  int64_t groups;
  const char* entry;
};

void PrintTo(const NormCase& c, std::ostream* os) { *os << c.name; }

const NormCase kGroupNorm{"group_norm", model::FieldNormLayer::Over::kGroups, 2, "{type: group_norm, groups: 2}"};
const NormCase kInstanceNorm{"instance_norm", model::FieldNormLayer::Over::kGroups, kHidden, "{type: instance_norm}"};
const NormCase kLayerNorm{"layernorm", model::FieldNormLayer::Over::kChannelsAtEachPoint, 1, "{type: layernorm}"};

// The stage on `domain`'s block, or (null) the plain layers on the whole field.
std::vector<std::unique_ptr<Layer>> norm_stage(kernels::Backend& backend, model::FieldDomain* domain,
                                               const NormCase& c) {
  const int64_t p = domain != nullptr ? domain->block_points() : points_of(kSplit.global);
  const kernels::NormGeometry norm{kHidden, c.groups, points_of(kSplit.global), 1e-5f};
  std::vector<std::unique_ptr<Layer>> layers;
  layers.push_back(std::make_unique<model::ConvLayer>(backend, periodic_conv(kIn, kHidden), true,
                                                      kernels::PadMode::kPeriodic, domain));
  layers.push_back(std::make_unique<model::FieldNormLayer>(backend, c.name, c.over, norm, domain));
  layers.push_back(std::make_unique<model::ActivationLayer>(backend, kernels::Activation::kGelu, kHidden * p));
  layers.push_back(std::make_unique<model::DropoutLayer>(backend, kHidden * p, kDropout, domain));
  layers.push_back(std::make_unique<model::ConvLayer>(backend, periodic_conv(kHidden, kOut), true,
                                                      kernels::PadMode::kPeriodic, domain));
  for (size_t i = 0; i < layers.size(); ++i) {
    layers[i]->set_global_index(static_cast<int>(i));
    layers[i]->init(7);
  }
  return layers;
}

using StepResults = StageStepResults;

using Build = std::function<std::vector<std::unique_ptr<Layer>>(model::FieldDomain*)>;

// One step of 2 micro-batches (F0, F1, B0, I1, W1, finish_domain_step) on `run`'s block, or (null) the plain
// layers on the whole field. Micro-batch m holds global samples 2m and 2m + 1 (their dropout masks differ).
StepResults run_step(kernels::Backend& backend, const Runs& runs, const FieldRun* run, const Build& build,
                     model::RecomputeMode recompute) {
  std::unique_ptr<BlockDomain> domain = run != nullptr ? std::make_unique<BlockDomain>(run->field()) : nullptr;
  model::StageModule stage(backend, 0, build(domain.get()), model::recompute_policy(recompute, {}), true, false);
  stage.zero_grad();
  const bool split = run == &runs.domain;
  const auto cut = [&](const Tensor& t, int64_t channels) { return split ? runs.cut(t, channels) : t; };
  return run_stage_step(backend, stage, domain.get(), cut, kSamples, kIn, kOut, points_of(kSplit.global),
                        [](int m) { return model::StepInfo{3, 0, true, static_cast<uint64_t>(m * kSamples)}; });
}

// Within rounding (the tiled statistics' sums differ from the plain op's in order only); a mask keyed by another
// feature, or statistics of the block alone, would not be close.
void expect_near(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  bool nonzero = false;
  for (int64_t i = 0; i < got.size(); ++i) {
    nonzero = nonzero || want.data()[i] != 0.0f;
    const float tolerance = 1e-5f * std::max(1.0f, std::fabs(want.data()[i]));
    ASSERT_NEAR(got.data()[i], want.data()[i], tolerance) << what << " element " << i << " (one block vs plain)";
  }
  EXPECT_TRUE(nonzero) << what << " is all zeros";
}

// `got` on this rank's block, `want` on the whole field.
void expect_same_step(const StepResults& got, const StepResults& want, const Runs& runs, const std::string& what) {
  const auto part = [&](const Tensor& t, int64_t channels) { return runs.cut(t, channels); };
  for (size_t m = 0; m < 2; ++m) {
    const std::string mb = ", micro-batch " + std::to_string(m) + " (" + what + ")";
    expect_bits(got.y[m], part(want.y[m], kOut), "stage output" + mb);
    EXPECT_EQ(std::memcmp(&got.losses[m], &want.losses[m], sizeof(double)), 0)
        << "loss" << mb << ": " << got.losses[m] << " vs " << want.losses[m];
    expect_bits(got.dx[m], part(want.dx[m], kIn), "input gradient" + mb);
  }
  ASSERT_EQ(got.grads.size(), want.grads.size()) << what;
  for (size_t i = 0; i < got.grads.size(); ++i) {
    expect_bits(got.grads[i], want.grads[i], "parameter gradient " + std::to_string(i) + " (" + what + ")");
  }
}

class DomainNormLayerTest : public ::testing::TestWithParam<NormCase> {};

TEST_P(DomainNormLayerTest, BlocksGiveTheOneBlockRunsBits) {
  kernels::CpuBackend backend;
  Runs runs(kSplit);
  const Build build = [&](model::FieldDomain* domain) { return norm_stage(backend, domain, GetParam()); };
  const StepResults whole = run_step(backend, runs, runs.whole.get(), build, model::RecomputeMode::kNone);
  const StepResults plain = run_step(backend, runs, nullptr, build, model::RecomputeMode::kNone);
  for (size_t m = 0; m < 2; ++m) {
    expect_near(whole.y[m], plain.y[m], "stage output");
    EXPECT_NEAR(whole.losses[m], plain.losses[m], 1e-6 * plain.losses[m]);
    expect_near(whole.dx[m], plain.dx[m], "input gradient");
  }
  ASSERT_EQ(whole.grads.size(), 6u) << "two convs' and the norm's weights and biases";
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    expect_near(whole.grads[i], plain.grads[i], "parameter gradient " + std::to_string(i));
  }
  expect_same_step(run_step(backend, runs, &runs.domain, build, model::RecomputeMode::kNone), whole, runs,
                   "split vs one block");
  expect_same_step(run_step(backend, runs, &runs.domain, build, model::RecomputeMode::kFull), whole, runs,
                   "split under full recompute vs one block");
}

INSTANTIATE_TEST_SUITE_P(Norms, DomainNormLayerTest,
                         ::testing::Values(kGroupNorm, kInstanceNorm, kLayerNorm),
                         [](const ::testing::TestParamInfo<NormCase>& info) { return std::string(info.param.name); });

std::string stage_config(const NormCase& c) {
  return std::string("model:\n  inputs: [3, 16, 16]\n  layers:\n") +
         "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n    - " + c.entry +
         "\n    - {type: gelu}\n    - {type: dropout, p: 0.25}\n"
         "    - {type: conv, channels: 2, kernel: 3, padding: periodic}\ndata: {type: synthetic, batch: 2}\n";
}

// build_layers builds the norms and dropout on the blocks: the hand-built stage's one-block bits.
TEST(DomainNormLayerTest, BuilderGivesTheBlocksLayers) {
  kernels::CpuBackend backend;
  Runs runs(kSplit);
  for (const NormCase& c : {kGroupNorm, kLayerNorm}) {
    const config::Config cfg = config::parse_config(stage_config(c));
    const Build built = [&](model::FieldDomain* domain) {
      std::vector<std::unique_ptr<Layer>> layers = model::build_layers(
          cfg.model, backend, {}, 0, static_cast<int>(cfg.model.layers.size()), config::input_shape_of(cfg.model),
          domain);
      model::init_layers(layers, 7);
      return layers;
    };
    const Build hand = [&](model::FieldDomain* domain) { return norm_stage(backend, domain, c); };
    const StepResults whole = run_step(backend, runs, runs.whole.get(), hand, model::RecomputeMode::kNone);
    expect_same_step(run_step(backend, runs, &runs.domain, built, model::RecomputeMode::kNone), whole, runs,
                     std::string(c.name) + ": built, split vs hand-built, one block");
  }
}

void expect_refused(const std::function<void()>& build, ErrorCode code, const std::string& message) {
  try {
    build();
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

// What these layers cannot run on a block is refused when they are built, naming what is wrong.
TEST(DomainNormLayerTest, WhatTheBlockCannotRunIsRefused) {
  kernels::CpuBackend backend;
  FieldRun one(MPI_COMM_SELF, kSplit, {{16}, {16}}, 0);
  BlockDomain domain(one.field());
  const int64_t points = points_of(kSplit.global);
  expect_refused([&] { model::FieldNormLayer(backend, "layernorm", model::FieldNormLayer::Over::kChannelsAtEachPoint,
                                             kernels::NormGeometry{kHidden, 1, points / 2, 1e-5f}, &domain); },
                 ErrorCode::kInvalidArgument,
                 "layernorm layer on a split field: tiled group norm: the norm's 128 points are not the field's 256");
  expect_refused([&] { model::FieldNormLayer(backend, "group_norm", model::FieldNormLayer::Over::kGroups,
                                             kernels::NormGeometry{kHidden, 2, points / 4, 1e-5f}, &domain); },
                 ErrorCode::kInvalidArgument,
                 "group_norm layer on a split field: tiled group norm: the norm's 64 points are not the field's 256");
  expect_refused([&] { model::DropoutLayer(backend, kHidden * points + 1, kDropout, &domain); },
                 ErrorCode::kInvalidArgument, "dropout on a split field: 1025 features per sample are not whole "
                                              "channels of the block's 256 points");
}

}  // namespace
}  // namespace sluice::runtime
