// The model's layers on a rank's block (issue 32): a small U-Net-like StageModule — conv 3x3 periodic -> GELU
// (kept as a skip) -> max pool 2 -> conv 3x3 -> up by 2 -> concat the skip -> conv 1x1 — with the field MSE loss,
// each layer built with the rank's FieldDomain level (core/runtime/block_domain.h), run forward and backward over 2
// micro-batches (one fused backward, one split into I and W) on 4 MPI ranks holding the blocks of an uneven 2 x 2
// split, then finish_domain_step. Against the same stage on ONE block (the whole field, one rank, the same code):
// outputs, losses, the input gradient blocks and every parameter gradient bit for bit. The up step is nearest
// upsampling, a stride = kernel transposed conv, or linear upsampling; the split also runs with full recompute
// (the halos exchanged again, the per-tile gradients added only by the backward). The one-block run is also checked
// against the plain layers (no domain) to within rounding, which pins the halos, the levels and the gradient sums.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/model/activation_layer.h"
#include "core/model/builder.h"
#include "core/model/conv_layer.h"
#include "core/model/conv_transpose_layer.h"
#include "core/model/loss.h"
#include "core/model/pool_layer.h"
#include "core/model/skip_layer.h"
#include "core/model/stage_module.h"
#include "core/model/upsample_layer.h"
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
using model::LayerCarry;
using model::SkipLayer;

const Split kUneven2d{{16, 16}, {4, 4}, {{8, 8}, {4, 12}}};
constexpr int64_t kSamples = 2, kIn = 3, kHidden = 3, kOut = 2;

enum class Up { kNearest, kConvTranspose, kLinear };

kernels::ConvGeometry periodic_conv(const std::vector<int64_t>& in, int64_t in_channels, int64_t out_channels,
                                    int64_t kernel) {
  kernels::ConvGeometry g;
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  g.in = in;
  g.kernel.assign(in.size(), kernel);
  g.stride.assign(in.size(), 1);
  g.dilation.assign(in.size(), 1);
  g.pad_low.assign(in.size(), kernels::same_pad_low(kernel, 1));
  g.pad_high.assign(in.size(), kernels::same_pad_high(kernel, 1));
  return g;
}

std::unique_ptr<Layer> up_layer(kernels::Backend& backend, Up up, const std::vector<int64_t>& in,
                                model::FieldDomain* coarse) {
  if (up == Up::kConvTranspose) {
    kernels::DeconvGeometry g;
    g.in_channels = g.out_channels = kHidden;
    g.in = in;
    g.kernel = g.stride = {2, 2};
    return std::make_unique<model::ConvTransposeLayer>(backend, g, true, coarse);
  }
  kernels::ResampleGeometry g;
  g.mode = up == Up::kLinear ? kernels::ResampleMode::kLinear : kernels::ResampleMode::kNearest;
  g.channels = kHidden;
  g.in = in;
  g.factor = {2, 2};
  return std::make_unique<model::UpsampleLayer>(backend, g, coarse);
}

// The stage on `fine`'s block (widths are the block's), or without a domain on the whole field (null: the plain
// layers, no tiles, no halo exchange). The skip "s" (the GELU's output) rides beside the main tensor from layer 1 to
// the concat at layer 5.
std::vector<std::unique_ptr<Layer>> unet_layers(kernels::Backend& backend, model::FieldDomain* fine, Up up) {
  const std::vector<int64_t> global = kUneven2d.global, half = {global[0] / 2, global[1] / 2};
  model::FieldDomain* coarse = fine != nullptr ? &fine->coarsened({2, 2}) : nullptr;
  const int64_t p = fine != nullptr ? fine->block_points() : points_of(global);
  const int64_t q = fine != nullptr ? coarse->block_points() : points_of(half);
  const std::vector<model::SkipSlot> s = {{"s", kHidden * p}};
  // The inner layer carries its global index too: its initial values are keyed by it (as the builder does).
  const auto carried = [&](int index, std::unique_ptr<Layer> inner, int64_t in, int64_t out) {
    inner->set_global_index(index);
    return std::make_unique<SkipLayer>(backend, std::move(inner), model::Join::kNone, "", "", in, out,
                                       LayerCarry{s, s, false});
  };
  std::vector<std::unique_ptr<Layer>> layers;
  layers.push_back(std::make_unique<model::ConvLayer>(backend, periodic_conv(global, kIn, kHidden, 3), true,
                                                      kernels::PadMode::kPeriodic, fine));
  layers.push_back(std::make_unique<SkipLayer>(
      backend, std::make_unique<model::ActivationLayer>(backend, kernels::Activation::kGelu, kHidden * p),
      model::Join::kNone, "s", "", kHidden * p, kHidden * p, LayerCarry{{}, s, true}));
  kernels::PoolGeometry pool{kernels::PoolMode::kMax, kHidden, global, {2, 2}};
  layers.push_back(carried(2, std::make_unique<model::PoolLayer>(backend, pool, fine), kHidden * p, kHidden * q));
  layers.push_back(carried(3,
                           std::make_unique<model::ConvLayer>(backend, periodic_conv(half, kHidden, kHidden, 3), true,
                                                              kernels::PadMode::kPeriodic, coarse),
                           kHidden * q, kHidden * q));
  layers.push_back(carried(4, up_layer(backend, up, half, coarse), kHidden * q, kHidden * p));
  layers.push_back(std::make_unique<SkipLayer>(backend, nullptr, model::Join::kConcat, "", "s", kHidden * p,
                                               2 * kHidden * p, LayerCarry{s, {}, false}));
  layers.push_back(std::make_unique<model::ConvLayer>(
      backend, periodic_conv(global, 2 * kHidden, kOut, 1), true, std::nullopt, fine));
  for (size_t i = 0; i < layers.size(); ++i) {
    layers[i]->set_global_index(static_cast<int>(i));
    layers[i]->init(7);
  }
  return layers;
}

struct StepResults : StageStepResults {
  int64_t halo_bytes = 0;  // this run's halo fills, as the channel counts them
};

// One optimizer step of 2 micro-batches: F0, F1, B0, then I1 and W1; then finish_domain_step. On `run`'s block,
// or (null) the plain layers on the whole field.
using Build = std::function<std::vector<std::unique_ptr<Layer>>(model::FieldDomain*)>;
using Cut = std::function<Tensor(const Tensor&, int64_t)>;

StepResults run_step(kernels::Backend& backend, FieldRun* run, const Build& build, model::RecomputeMode recompute,
                     const Cut& cut) {
  std::unique_ptr<BlockDomain> domain = run != nullptr ? std::make_unique<BlockDomain>(run->field()) : nullptr;
  model::StageModule stage(backend, 0, build(domain.get()), model::recompute_policy(recompute, {}), true, false);
  stage.zero_grad();
  const int64_t before = run != nullptr ? run->channel().totals().bytes_sent : 0;
  StepResults r{run_stage_step(backend, stage, domain.get(), cut, kSamples, kIn, kOut, points_of(kUneven2d.global),
                               [](int) { return model::StepInfo{3, 0, true, 0}; })};
  if (run != nullptr) r.halo_bytes = run->channel().totals().bytes_sent - before;
  return r;
}

// Within rounding: the one-block run's own bits differ from the plain layers' (other call shapes), but a wrong halo,
// level or a gradient left out would not be close.
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

struct StageCase {
  const char* name;
  Up up;
};

void PrintTo(const StageCase& c, std::ostream* os) { *os << c.name; }

class DomainStageTest : public ::testing::TestWithParam<StageCase> {};

TEST_P(DomainStageTest, BlocksGiveTheOneBlockRunsBits) {
  kernels::CpuBackend backend;
  Runs runs(kUneven2d);
  const Up up = GetParam().up;
  const Build up_stage = [&](model::FieldDomain* fine) { return unet_layers(backend, fine, up); };
  const auto whole_cut = [](const Tensor& t, int64_t) { return t; };
  const auto block_cut = [&](const Tensor& t, int64_t c) { return runs.cut(t, c); };
  const StepResults whole = run_step(backend, runs.whole.get(), up_stage, model::RecomputeMode::kNone, whole_cut);
  EXPECT_EQ(whole.halo_bytes, 0) << "one block on one rank: its halos are local copies";
  const StepResults plain = run_step(backend, nullptr, up_stage, model::RecomputeMode::kNone, whole_cut);
  for (size_t m = 0; m < 2; ++m) {
    expect_near(whole.y[m], plain.y[m], "stage output");
    EXPECT_NEAR(whole.losses[m], plain.losses[m], 1e-6 * plain.losses[m]);
    expect_near(whole.dx[m], plain.dx[m], "input gradient");
  }
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    expect_near(whole.grads[i], plain.grads[i], "parameter gradient " + std::to_string(i));
  }
  int64_t halo_bytes_without_recompute = 0;
  for (const model::RecomputeMode recompute : {model::RecomputeMode::kNone, model::RecomputeMode::kFull}) {
    const std::string mode = recompute == model::RecomputeMode::kNone ? "" : " (full recompute)";
    const StepResults split = run_step(backend, &runs.domain, up_stage, recompute, block_cut);
    for (size_t m = 0; m < 2; ++m) {
      const std::string mb = ", micro-batch " + std::to_string(m) + mode;
      expect_bits(split.y[m], runs.cut(whole.y[m], kOut), "stage output" + mb);
      EXPECT_EQ(std::memcmp(&split.losses[m], &whole.losses[m], sizeof(double)), 0)
          << "loss" << mb << ": " << split.losses[m] << " vs " << whole.losses[m];
      expect_bits(split.dx[m], runs.cut(whole.dx[m], kIn), "input gradient" + mb);
    }
    ASSERT_EQ(split.grads.size(), whole.grads.size());
    ASSERT_EQ(split.grads.size(), GetParam().up == Up::kConvTranspose ? 8u : 6u);
    for (size_t i = 0; i < split.grads.size(); ++i) {
      expect_bits(split.grads[i], whole.grads[i], "parameter gradient " + std::to_string(i) + mode);
    }
    EXPECT_GT(split.halo_bytes, 0);
    if (recompute == model::RecomputeMode::kNone) halo_bytes_without_recompute = split.halo_bytes;
    if (recompute == model::RecomputeMode::kFull) {
      EXPECT_GT(split.halo_bytes, halo_bytes_without_recompute)
          << "a recomputed forward fills its halos again";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ups, DomainStageTest,
                         ::testing::Values(StageCase{"nearest", Up::kNearest},
                                           StageCase{"conv_transpose", Up::kConvTranspose},
                                           StageCase{"linear", Up::kLinear}),
                         [](const ::testing::TestParamInfo<StageCase>& info) { return std::string(info.param.name); });

// The same U-Net from a config, built by model::build_layers with the rank's domain.
const char* const kUnetConfig = R"(model:
  inputs: [3, 16, 16]
  layers:
    - {type: conv, channels: 3, kernel: 3, padding: periodic}
    - {type: gelu, name: s}
    - {type: pool, kernel: 2, mode: max}
    - {type: conv, channels: 3, kernel: 3, padding: periodic}
    - {type: upsample, factor: 2}
    - {type: concat, from: s}
    - {type: conv, channels: 2, kernel: 1}
data: {type: synthetic, batch: 2}
)";

void expect_same_step(const StepResults& got, const StepResults& want, const Cut& cut, const std::string& what) {
  for (size_t m = 0; m < 2; ++m) {
    const std::string mb = ", micro-batch " + std::to_string(m) + " (" + what + ")";
    expect_bits(got.y[m], cut(want.y[m], kOut), "stage output" + mb);
    EXPECT_EQ(std::memcmp(&got.losses[m], &want.losses[m], sizeof(double)), 0) << "loss" << mb;
    expect_bits(got.dx[m], cut(want.dx[m], kIn), "input gradient" + mb);
  }
  ASSERT_EQ(got.grads.size(), want.grads.size()) << what;
  for (size_t i = 0; i < got.grads.size(); ++i) {
    expect_bits(got.grads[i], want.grads[i], "parameter gradient " + std::to_string(i) + " (" + what + ")");
  }
}

// Built from the config on the blocks: the one-block run's bits, and the one-block run is the hand-built stage's.
TEST(DomainStageTest, BuilderGivesTheBlocksLayers) {
  kernels::CpuBackend backend;
  Runs runs(kUneven2d);
  const config::Config cfg = config::parse_config(kUnetConfig);
  const Build built = [&](model::FieldDomain* fine) {
    std::vector<std::unique_ptr<Layer>> layers = model::build_layers(
        cfg.model, backend, {}, 0, static_cast<int>(cfg.model.layers.size()), config::input_shape_of(cfg.model), fine);
    model::init_layers(layers, 7);
    return layers;
  };
  const Build hand = [&](model::FieldDomain* fine) { return unet_layers(backend, fine, Up::kNearest); };
  const Cut whole_cut = [](const Tensor& t, int64_t) { return t; };
  const Cut block_cut = [&](const Tensor& t, int64_t c) { return runs.cut(t, c); };
  const StepResults whole = run_step(backend, runs.whole.get(), built, model::RecomputeMode::kNone, whole_cut);
  expect_same_step(whole, run_step(backend, runs.whole.get(), hand, model::RecomputeMode::kNone, whole_cut),
                   whole_cut, "built vs hand-built, one block");
  expect_same_step(run_step(backend, &runs.domain, built, model::RecomputeMode::kNone, block_cut), whole, block_cut,
                   "built, split vs one block");
  // A layer that needs the whole sample is refused by name.
  config::Config with_flatten = cfg;
  config::LayerSpec flatten;
  flatten.type = config::LayerType::kFlatten;
  with_flatten.model.layers.insert(with_flatten.model.layers.begin() + 1, flatten);
  BlockDomain domain(runs.domain.field());
  try {
    model::build_layers(with_flatten.model, backend, {}, 0, 2, config::input_shape_of(cfg.model), &domain);
    ADD_FAILURE() << "a flatten layer was built on a block";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("model.layers[1]: a flatten layer needs the whole sample and cannot run on "
                                         "a block of a split field"),
              std::string::npos)
        << e.what();
  }
}

// What the block cannot run is refused when the layer is built, naming the layer: a reflect-padded conv whose tiles
// are not wider than its halo (a mirror must stay in its tile), a layer whose geometry is not its level's. Zero- and
// reflect-padded convs build.
TEST(DomainStageTest, LayersTheBlockCannotRunAreRefused) {
  kernels::CpuBackend backend;
  FieldRun one(MPI_COMM_SELF, kUneven2d, {{16}, {16}}, 0);
  BlockDomain domain(one.field());
  const auto refused = [](const std::function<void()>& build, ErrorCode code, const std::string& message) {
    try {
      build();
      ADD_FAILURE() << "accepted; expected: " << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  refused([&] { model::ConvLayer(backend, periodic_conv({16, 16}, 1, 1, 9), true, kernels::PadMode::kReflect,
                                 &domain); },
          ErrorCode::kInvalidArgument, "conv layer: padding reflect on a split field needs tiles wider than the halo");
  EXPECT_NO_THROW(model::ConvLayer(backend, periodic_conv({16, 16}, 1, 1, 3), true, std::nullopt, &domain));
  EXPECT_NO_THROW(model::ConvLayer(backend, periodic_conv({16, 16}, 1, 1, 3), true, kernels::PadMode::kReflect,
                                   &domain));
  refused([&] { model::ConvLayer(backend, periodic_conv({8, 8}, 1, 1, 3), true, kernels::PadMode::kPeriodic,
                                 &domain); },
          ErrorCode::kInvalidArgument, "conv layer runs on a field of extents [8, 8] but its domain level is [16, 16]");
  kernels::PoolGeometry pool{kernels::PoolMode::kMax, 1, {16, 16}, {2, 2}};
  refused([&] { model::PoolLayer(backend, pool, &domain.coarsened({2, 2})); }, ErrorCode::kInvalidArgument,
          "pool layer runs on a field of extents [16, 16] but its domain level is [8, 8]");
}

}  // namespace
}  // namespace sluice::runtime
