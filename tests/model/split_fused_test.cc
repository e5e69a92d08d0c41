// Splitting backward into I and W (with other micro-batches' work in between, as zero-bubble schedules do)
// must give gradients and input gradients identical to the bit with the fused B.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/model/builder.h"
#include "core/model/stage_module.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/test_support.h"

namespace sluice::model {
namespace {

using kernels::Tensor;
using testing::bits_equal;
using testing::layer_spec;
using testing::random_tensor;

config::ModelSpec every_layer_type_model() {
  config::ModelSpec spec;
  spec.inputs = 6;
  config::LayerSpec linear = layer_spec("linear");
  linear.outputs = 8;
  config::LayerSpec dropout = layer_spec("dropout");
  dropout.p = 0.25;
  config::LayerSpec mlp = layer_spec("residual_mlp");
  mlp.hidden = 12;
  mlp.activation = kernels::Activation::kGelu;
  config::LayerSpec head = layer_spec("linear");
  head.outputs = 3;
  head.bias = false;
  spec.layers = {linear, layer_spec("gelu"), dropout, mlp, layer_spec("layernorm"), layer_spec("tanh"),
                 layer_spec("relu"), head};
  return spec;
}

// The stage holds global layer 0, so by default it skips the model input's gradient (returns it empty);
// `skip_model_input_grad = false` computes it, so split and fused input gradients are compared too.
StageModule make_stage(bool skip_model_input_grad) {
  auto layers = build_layers(every_layer_type_model(), kernels::cpu_backend());
  init_layers(layers, 5);
  return StageModule(kernels::cpu_backend(), 0, std::move(layers), {}, /*fuse_layers=*/true, skip_model_input_grad);
}

class SplitFusedStage : public ::testing::TestWithParam<bool> {};

INSTANTIATE_TEST_SUITE_P(ModelInputGrad, SplitFusedStage, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Skipped" : "Computed";
                         });

TEST_P(SplitFusedStage, InterleavedSplitBackwardEqualsFusedToTheBit) {
  const bool skip_model_input_grad = GetParam();
  StageModule fused = make_stage(skip_model_input_grad);
  StageModule split = make_stage(skip_model_input_grad);
  const StepInfo step{9, 4, true};
  std::vector<Tensor> inputs, grads;
  for (int mb = 0; mb < 3; ++mb) {
    inputs.push_back(random_tensor(4, 6, 10 + mb));
    grads.push_back(random_tensor(4, 3, 20 + mb));
  }
  // Fused: F0 F1 B0 F2 B1 B2.
  std::vector<Tensor> fused_dx(3), split_dx(3);
  fused.forward(0, inputs[0], step);
  fused.forward(1, inputs[1], step);
  fused_dx[0] = fused.backward(0, grads[0]);
  fused.forward(2, inputs[2], step);
  fused_dx[1] = fused.backward(1, grads[1]);
  fused_dx[2] = fused.backward(2, grads[2]);
  // Split, zero-bubble style: F0 F1 I0 F2 I1 W0 I2 W1 W2 (W in micro-batch order, like the fused run).
  split.forward(0, inputs[0], step);
  split.forward(1, inputs[1], step);
  split_dx[0] = split.backward_input(0, grads[0]);
  split.forward(2, inputs[2], step);
  split_dx[1] = split.backward_input(1, grads[1]);
  split.backward_weight(0);
  split_dx[2] = split.backward_input(2, grads[2]);
  split.backward_weight(1);
  split.backward_weight(2);

  for (int mb = 0; mb < 3; ++mb) {
    EXPECT_EQ(fused_dx[mb].empty(), skip_model_input_grad) << "micro-batch " << mb;
    EXPECT_EQ(split_dx[mb].empty(), skip_model_input_grad) << "micro-batch " << mb;
    EXPECT_TRUE(bits_equal(fused_dx[mb], split_dx[mb])) << "micro-batch " << mb;
  }
  const auto fused_parameters = fused.parameters();
  const auto split_parameters = split.parameters();
  ASSERT_EQ(fused_parameters.size(), split_parameters.size());
  ASSERT_FALSE(fused_parameters.empty());
  for (size_t i = 0; i < fused_parameters.size(); ++i) {
    EXPECT_TRUE(bits_equal(fused_parameters[i]->grad, split_parameters[i]->grad))
        << fused_parameters[i]->qualified_name();
    EXPECT_GT(kernels::cpu_backend().sum_of_squares(fused_parameters[i]->grad), 0.0)
        << fused_parameters[i]->qualified_name();
  }
}

TEST(SplitFused, EachLayerAccumulatesIdenticallyOnTopOfExistingGradients) {
  auto fused_layers = build_layers(every_layer_type_model(), kernels::cpu_backend());
  auto split_layers = build_layers(every_layer_type_model(), kernels::cpu_backend());
  init_layers(fused_layers, 3);
  init_layers(split_layers, 3);
  Tensor x = random_tensor(5, 6, 1);
  for (size_t i = 0; i < fused_layers.size(); ++i) {
    Layer& fused = *fused_layers[i];
    Layer& split = *split_layers[i];
    // Start from the same non-zero gradients, as after earlier micro-batches.
    unsigned seed = 50;
    for (size_t p = 0; p < fused.parameters().size(); ++p) {
      Tensor start = random_tensor(fused.parameters()[p]->grad.rows(), fused.parameters()[p]->grad.cols(), seed++);
      fused.parameters()[p]->grad = start;
      split.parameters()[p]->grad = start;
    }
    ForwardContext context{1, 2, 3, static_cast<int>(i), true};
    LayerSaved fused_saved, split_saved;
    Tensor y = fused.forward(x, context, fused_saved);
    ASSERT_TRUE(bits_equal(y, split.forward(x, context, split_saved))) << fused.type();
    Tensor dy = random_tensor(y.rows(), y.cols(), 60 + static_cast<unsigned>(i));
    Tensor fused_dx = fused.backward(dy, fused_saved);
    Tensor split_dx = split.backward_input(dy, split_saved);
    split.backward_weight(dy, split_saved);
    EXPECT_TRUE(bits_equal(fused_dx, split_dx)) << "layer " << i << " " << fused.type();
    for (size_t p = 0; p < fused.parameters().size(); ++p) {
      EXPECT_TRUE(bits_equal(fused.parameters()[p]->grad, split.parameters()[p]->grad))
          << "layer " << i << " " << fused.parameters()[p]->name;
    }
    x = y;
  }
}

}  // namespace
}  // namespace sluice::model
