// StageModule: recompute modes are invisible in the results (to the bit, with dropout present), stash
// accounting returns to zero, the partition does not change results, and misuse is reported. The stages here
// hold global layer 0, whose input gradient StageModule skips by default (an empty tensor); tests that compare
// input gradients also run with the skip off (skip_model_input_grad = false) so those stay checked.
#include "core/model/stage_module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/model/builder.h"
#include "core/model/partition.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/test_support.h"

namespace sluice::model {
namespace {

using kernels::Tensor;
using testing::bits_equal;
using testing::layer_spec;
using testing::random_tensor;

constexpr int kMicrobatches = 3;

config::ModelSpec model_with_dropout() {
  config::ModelSpec spec;
  spec.inputs = 8;
  config::LayerSpec linear = layer_spec("linear");
  linear.outputs = 16;
  config::LayerSpec dropout = layer_spec("dropout");
  dropout.p = 0.25;
  config::LayerSpec mlp = layer_spec("residual_mlp");
  mlp.hidden = 24;
  mlp.activation = kernels::Activation::kRelu;
  config::LayerSpec late_dropout = layer_spec("dropout");
  late_dropout.p = 0.1;
  config::LayerSpec head = layer_spec("linear");
  head.outputs = 4;
  // 0 linear, 1 gelu, 2 dropout, 3 residual_mlp, 4 layernorm, 5 dropout, 6 linear
  spec.layers = {linear, layer_spec("gelu"), dropout, mlp, layer_spec("layernorm"), late_dropout, head};
  return spec;
}

std::vector<std::unique_ptr<Layer>> initialised_layers() {
  auto layers = build_layers(model_with_dropout(), kernels::cpu_backend());
  init_layers(layers, 17);
  return layers;
}

constexpr bool kFuse = true;

struct RunResult {
  std::vector<Tensor> outputs;
  std::vector<Tensor> input_grads;
  std::vector<Tensor> param_grads;
  size_t peak_bytes = 0;
};

// All forwards, then backwards in a mixed order: B for micro-batch 1, split I/W for 0 and 2.
RunResult run(StageModule& stage) {
  RunResult result;
  for (int mb = 0; mb < kMicrobatches; ++mb) {
    const StepInfo step{23, 6, true, static_cast<uint64_t>(mb) * 5};  // micro-batch mb holds samples 5mb .. 5mb+4
    result.outputs.push_back(stage.forward(mb, random_tensor(5, 8, mb), step));
  }
  EXPECT_EQ(stage.stashed_microbatches(), static_cast<size_t>(kMicrobatches));
  result.input_grads.resize(kMicrobatches);
  result.input_grads[1] = stage.backward(1, random_tensor(5, 4, 101));
  result.input_grads[0] = stage.backward_input(0, random_tensor(5, 4, 100));
  result.input_grads[2] = stage.backward_input(2, random_tensor(5, 4, 102));
  stage.backward_weight(0);
  stage.backward_weight(2);
  for (Parameter* parameter : stage.parameters()) result.param_grads.push_back(parameter->grad);
  result.peak_bytes = stage.peak_stashed_bytes();
  return result;
}

void expect_identical(const RunResult& a, const RunResult& b, const std::string& label) {
  for (int mb = 0; mb < kMicrobatches; ++mb) {
    EXPECT_TRUE(bits_equal(a.outputs[mb], b.outputs[mb])) << label << " output " << mb;
    EXPECT_EQ(a.input_grads[mb].empty(), b.input_grads[mb].empty()) << label << " input grad " << mb;
    EXPECT_TRUE(bits_equal(a.input_grads[mb], b.input_grads[mb])) << label << " input grad " << mb;
  }
  ASSERT_EQ(a.param_grads.size(), b.param_grads.size());
  for (size_t i = 0; i < a.param_grads.size(); ++i) {
    EXPECT_TRUE(bits_equal(a.param_grads[i], b.param_grads[i])) << label << " param grad " << i;
  }
}

TEST(StageModuleRecompute, NoneFullAndSelectiveGiveBitIdenticalResults) {
  for (const bool skip_model_input_grad : {true, false}) {
    const std::string label = skip_model_input_grad ? " (model input grad skipped)" : " (model input grad computed)";
    StageModule none(kernels::cpu_backend(), 0, initialised_layers(), RecomputePolicy{RecomputeMode::kNone, {}},
                     kFuse, skip_model_input_grad);
    StageModule full(kernels::cpu_backend(), 0, initialised_layers(), RecomputePolicy{RecomputeMode::kFull, {}},
                     kFuse, skip_model_input_grad);
    StageModule selective(kernels::cpu_backend(), 0, initialised_layers(),
                          RecomputePolicy{RecomputeMode::kSelective, {1, 2, 3, 5}}, kFuse, skip_model_input_grad);
    const RunResult reference = run(none);
    for (int mb = 0; mb < kMicrobatches; ++mb) {
      EXPECT_EQ(reference.input_grads[mb].empty(), skip_model_input_grad) << label << " micro-batch " << mb;
    }
    expect_identical(reference, run(full), "full" + label);
    expect_identical(reference, run(selective), "selective" + label);
  }
}

// GPipe-like order (all F, then all B), where the peak is every micro-batch's forward stash at once.
size_t gpipe_peak_bytes(StageModule& stage) {
  const StepInfo step{23, 6, true};
  for (int mb = 0; mb < kMicrobatches; ++mb) stage.forward(mb, random_tensor(5, 8, mb), step);
  for (int mb = 0; mb < kMicrobatches; ++mb) stage.backward(mb, random_tensor(5, 4, 100 + mb));
  return stage.peak_stashed_bytes();
}

TEST(StageModuleRecompute, RecomputeLowersThePeakStash) {
  StageModule none(kernels::cpu_backend(), 0, initialised_layers(), RecomputePolicy{RecomputeMode::kNone, {}});
  StageModule full(kernels::cpu_backend(), 0, initialised_layers(), RecomputePolicy{RecomputeMode::kFull, {}});
  StageModule selective(kernels::cpu_backend(), 0, initialised_layers(),
                        RecomputePolicy{RecomputeMode::kSelective, {1, 2, 3}});
  const size_t none_peak = gpipe_peak_bytes(none);
  const size_t selective_peak = gpipe_peak_bytes(selective);
  EXPECT_LT(selective_peak, none_peak);
  EXPECT_LT(gpipe_peak_bytes(full), selective_peak);
}

TEST(StageModuleStash, CountsAndBytesReturnToZeroAfterBackward) {
  for (RecomputeMode mode : {RecomputeMode::kNone, RecomputeMode::kFull, RecomputeMode::kSelective}) {
    StageModule stage(kernels::cpu_backend(), 0, initialised_layers(), RecomputePolicy{mode, {3}});
    EXPECT_EQ(stage.stashed_bytes(), 0u);
    run(stage);
    EXPECT_EQ(stage.stashed_microbatches(), 0u);
    EXPECT_EQ(stage.stashed_bytes(), 0u);
    EXPECT_EQ(stage.peak_stashed_microbatches(), static_cast<size_t>(kMicrobatches));
    EXPECT_GT(stage.peak_stashed_bytes(), 0u);
    stage.reset_peaks();
    EXPECT_EQ(stage.peak_stashed_microbatches(), 0u);
    EXPECT_EQ(stage.peak_stashed_bytes(), 0u);
  }
}

TEST(StageModuleStash, BytesGrowWithEachForwardAndShrinkAfterW) {
  StageModule stage(kernels::cpu_backend(), 0, initialised_layers());
  const StepInfo step{1, 0, true};
  stage.forward(0, random_tensor(5, 8, 1), step);
  const size_t one = stage.stashed_bytes();
  EXPECT_GT(one, 0u);
  stage.forward(1, random_tensor(5, 8, 2), step);
  EXPECT_EQ(stage.stashed_bytes(), 2 * one);  // same shapes, same saved state
  stage.backward_input(0, random_tensor(5, 4, 3));
  EXPECT_EQ(stage.stashed_microbatches(), 2u);  // W still needs micro-batch 0
  stage.backward_weight(0);
  EXPECT_EQ(stage.stashed_bytes(), one);
}

TEST(StageModulePartition, TwoStagesChainedEqualOneStageToTheBit) {
  for (const bool skip_model_input_grad : {true, false}) {
    StageModule whole(kernels::cpu_backend(), 0, initialised_layers(), {}, kFuse, skip_model_input_grad);
    auto layers = initialised_layers();
    StageModule front(kernels::cpu_backend(), 0, take_layers(layers, LayerRange{0, 3}), {}, kFuse,
                      skip_model_input_grad);
    StageModule back(kernels::cpu_backend(), 3, take_layers(layers, LayerRange{3, 7}), {}, kFuse,
                     skip_model_input_grad);
    EXPECT_FALSE(back.skips_input_grad());  // only the stage holding layer 0 skips
    const StepInfo step{23, 6, true};
    const Tensor input = random_tensor(5, 8, 4);
    const Tensor grad = random_tensor(5, 4, 5);
    const Tensor whole_out = whole.forward(0, input, step);
    const Tensor chained_out = back.forward(0, front.forward(0, input, step), step);
    EXPECT_TRUE(bits_equal(whole_out, chained_out));
    const Tensor whole_dx = whole.backward(0, grad);
    const Tensor chained_dx = front.backward(0, back.backward(0, grad));
    EXPECT_EQ(whole_dx.empty(), skip_model_input_grad);
    EXPECT_TRUE(bits_equal(whole_dx, chained_dx));
    std::vector<Parameter*> chained = front.parameters();
    for (Parameter* parameter : back.parameters()) chained.push_back(parameter);
    const std::vector<Parameter*> single = whole.parameters();
    ASSERT_EQ(single.size(), chained.size());
    for (size_t i = 0; i < single.size(); ++i) {
      EXPECT_EQ(single[i]->qualified_name(), chained[i]->qualified_name());
      EXPECT_TRUE(bits_equal(single[i]->grad, chained[i]->grad)) << single[i]->qualified_name();
    }
  }
}

// The mask is keyed by the global sample index of the micro-batch's rows (StepInfo::first_sample), not by the
// micro-batch number or the step: the same samples get the same mask in any micro-batch, other samples another.
TEST(StageModuleDropout, MaskDependsOnTheSamplesAndIsOffWhenNotTraining) {
  StageModule stage(kernels::cpu_backend(), 0, initialised_layers());
  const Tensor input = random_tensor(5, 8, 4);
  const Tensor train0 = stage.forward(0, input, StepInfo{1, 0, true, 0});
  const Tensor train1 = stage.forward(1, input, StepInfo{1, 0, true, 5});
  const Tensor same_samples = stage.forward(4, input, StepInfo{1, 3, true, 0});  // another micro-batch and step
  const Tensor eval0 = stage.forward(2, input, StepInfo{1, 0, false, 0});
  const Tensor eval1 = stage.forward(3, input, StepInfo{1, 0, false, 5});
  EXPECT_FALSE(bits_equal(train0, train1));
  EXPECT_TRUE(bits_equal(train0, same_samples));
  EXPECT_TRUE(bits_equal(eval0, eval1));
  // Rows 1..4 of a micro-batch starting at sample 0 are rows 0..3 of one starting at sample 1 (same input rows).
  Tensor shifted_input = Tensor::host(4, 8);
  std::copy(input.data() + 8, input.data() + 40, shifted_input.data());
  const Tensor shifted = stage.forward(5, shifted_input, StepInfo{1, 0, true, 1});
  // Equal up to rounding, not to the bit: a BLAS may compute a row with another kernel by its position in the
  // matrix (OpenBLAS 0.3.21's Prescott and Haswell kernels do for these 4- and 5-row products). A mask that differed
  // would zero or scale whole entries, far beyond this bound.
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < shifted.cols(); ++c) {
      EXPECT_NEAR(shifted.at(r, c), train0.at(r + 1, c), 1e-5f * (1.0f + std::fabs(train0.at(r + 1, c)))) << r << "," << c;
    }
  }
  for (int mb = 0; mb < 6; ++mb) stage.discard(mb);
  EXPECT_EQ(stage.stashed_microbatches(), 0u);
}

TEST(StageModuleNoParameters, WeightPassOnlyFreesTheStash) {
  config::ModelSpec spec;
  spec.inputs = 4;
  config::LayerSpec dropout = layer_spec("dropout");
  dropout.p = 0.5;
  spec.layers = {layer_spec("relu"), dropout};
  for (const bool skip_model_input_grad : {true, false}) {
    StageModule stage(kernels::cpu_backend(), 0, build_layers(spec, kernels::cpu_backend()), {}, kFuse,
                      skip_model_input_grad);
    EXPECT_TRUE(stage.parameters().empty());
    stage.forward(0, random_tensor(3, 4, 1), StepInfo{1, 0, true});
    const Tensor dx = stage.backward_input(0, random_tensor(3, 4, 2));
    EXPECT_EQ(dx.rows(), skip_model_input_grad ? 0 : 3);  // stage 0: the model input's gradient is skipped
    EXPECT_EQ(dx.cols(), skip_model_input_grad ? 0 : 4);
    EXPECT_EQ(stage.stashed_microbatches(), 1u);
    stage.backward_weight(0);
    EXPECT_EQ(stage.stashed_microbatches(), 0u);
    EXPECT_EQ(stage.stashed_bytes(), 0u);
  }
}

TEST(StageModuleZeroGrad, ClearsAccumulatedGradients) {
  StageModule stage(kernels::cpu_backend(), 0, initialised_layers());
  stage.forward(0, random_tensor(5, 8, 1), StepInfo{1, 0, true});
  stage.backward(0, random_tensor(5, 4, 2));
  double total = 0.0;
  for (Parameter* parameter : stage.parameters()) total += kernels::cpu_backend().sum_of_squares(parameter->grad);
  EXPECT_GT(total, 0.0);
  stage.zero_grad();
  for (Parameter* parameter : stage.parameters()) {
    EXPECT_EQ(kernels::cpu_backend().sum_of_squares(parameter->grad), 0.0) << parameter->qualified_name();
  }
}

template <typename Action>
void expect_error(ErrorCode code, const std::string& fragment, Action action) {
  try {
    action();
    FAIL() << "expected an error mentioning '" << fragment << "'";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), code) << error.what();
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(StageModuleErrors, MisuseIsReportedWithTheMicrobatch) {
  StageModule stage(kernels::cpu_backend(), 0, initialised_layers());
  const StepInfo step{1, 0, true};
  expect_error(ErrorCode::kState, "micro-batch 7", [&] { stage.backward(7, random_tensor(5, 4, 1)); });
  stage.forward(0, random_tensor(5, 8, 1), step);
  expect_error(ErrorCode::kState, "already stashed", [&] { stage.forward(0, random_tensor(5, 8, 1), step); });
  expect_error(ErrorCode::kState, "before its backward_input", [&] { stage.backward_weight(0); });
  expect_error(ErrorCode::kInvalidArgument, "takes 8 input features, got 3",
               [&] { stage.forward(1, random_tensor(5, 3, 1), step); });
  expect_error(ErrorCode::kInvalidArgument, "gradient has 2",
               [&] { stage.backward(0, random_tensor(5, 2, 1)); });
}

TEST(StageModuleErrors, LayersMustCarryTheirGlobalIndices) {
  auto layers = initialised_layers();
  expect_error(ErrorCode::kInvalidArgument, "global layer 2",
               [&] { StageModule(kernels::cpu_backend(), 2, take_layers(layers, LayerRange{0, 2})); });
}

TEST(RecomputePolicyParse, NamesAndErrors) {
  EXPECT_EQ(parse_recompute("full", {}).mode, RecomputeMode::kFull);
  EXPECT_EQ(parse_recompute("selective", {2, 4}).layers, (std::set<int>{2, 4}));
  expect_error(ErrorCode::kConfig, "'partial'", [] { parse_recompute("partial", {}); });
}

}  // namespace
}  // namespace sluice::model
