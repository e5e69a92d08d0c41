// Optimizers against values worked out by hand for a few elements, state naming for checkpoints, and the
// clipping helpers.
#include "core/model/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::model {
namespace {

using kernels::Tensor;

Parameter make_parameter(int layer, const std::string& name, std::vector<float> values, std::vector<float> grads) {
  Parameter parameter;
  parameter.name = name;
  parameter.layer_index = layer;
  const int64_t n = static_cast<int64_t>(values.size());
  parameter.value = Tensor::host_from(1, n, values);
  parameter.grad = Tensor::host_from(1, n, grads);
  return parameter;
}

TEST(SgdOptimizer, MomentumAndWeightDecayByHand) {
  Parameter p = make_parameter(0, "weight", {1.0f, 2.0f}, {0.5f, -1.0f});
  config::OptimizerSpec spec;
  spec.type = config::OptimizerType::kSgd;
  spec.lr = 0.1;
  spec.momentum = 0.9;
  spec.weight_decay = 0.1;
  auto optimizer = make_optimizer(spec, {&p}, kernels::cpu_backend());
  optimizer->step();
  // g' = g + 0.1 p = (0.6, -0.8); v = g'; p -= 0.1 v
  EXPECT_NEAR(p.value.data()[0], 0.94, 1e-6);
  EXPECT_NEAR(p.value.data()[1], 2.08, 1e-6);
  optimizer->step();
  // g' = (0.5 + 0.094, -1 + 0.208) = (0.594, -0.792); v = 0.9 v + g' = (1.134, -1.512)
  EXPECT_NEAR(p.value.data()[0], 0.94 - 0.1134, 1e-6);
  EXPECT_NEAR(p.value.data()[1], 2.08 + 0.1512, 1e-6);
  EXPECT_EQ(optimizer->step_count(), 2);
}

TEST(AdamWOptimizer, TwoStepsByHand) {
  Parameter p = make_parameter(2, "bias", {1.0f}, {0.2f});
  config::OptimizerSpec spec;
  spec.type = config::OptimizerType::kAdamW;
  spec.lr = 0.01;
  auto optimizer = make_optimizer(spec, {&p}, kernels::cpu_backend());
  optimizer->step();
  EXPECT_NEAR(p.value.data()[0], 0.99, 1e-6);  // first step moves by lr
  p.grad.data()[0] = -0.1f;
  optimizer->step();
  // m = 0.9*0.02 - 0.01 = 0.008, v = 0.999*4e-5 + 1e-5 = 4.996e-5;
  // m_hat = 0.008/0.19 = 0.0421053, v_hat = 4.996e-5/0.001999 = 0.0249925, update = 0.01*0.0421053/0.158090
  EXPECT_NEAR(p.value.data()[0], 0.9873366, 2e-6);
}

TEST(AdamWOptimizer, StateTensorsAreNamedAndLive) {
  Parameter w = make_parameter(3, "weight", {1.0f, 1.0f}, {1.0f, 1.0f});
  config::OptimizerSpec spec;
  spec.type = config::OptimizerType::kAdamW;
  auto optimizer = make_optimizer(spec, {&w}, kernels::cpu_backend());
  optimizer->step();
  const auto state = optimizer->state_tensors();
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0].name, "layers.3.weight.exp_avg");
  EXPECT_EQ(state[1].name, "layers.3.weight.exp_avg_sq");
  EXPECT_NEAR(state[0].tensor->data()[0], 0.1, 1e-6);

  // Restoring state into a fresh optimizer makes it continue exactly like the original.
  Parameter restored_w = w;
  auto restored = make_optimizer(spec, {&restored_w}, kernels::cpu_backend());
  const auto restored_state = restored->state_tensors();
  for (size_t i = 0; i < state.size(); ++i) *restored_state[i].tensor = *state[i].tensor;
  restored->set_step_count(optimizer->step_count());
  optimizer->step();
  restored->step();
  EXPECT_EQ(w.value.to_vector(), restored_w.value.to_vector());
}

TEST(SgdOptimizer, StateTensorIsTheMomentum) {
  Parameter w = make_parameter(1, "weight", {1.0f}, {2.0f});
  config::OptimizerSpec spec;
  spec.momentum = 0.5;
  auto optimizer = make_optimizer(spec, {&w}, kernels::cpu_backend());
  optimizer->step();
  const auto state = optimizer->state_tensors();
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].name, "layers.1.weight.momentum");
  EXPECT_FLOAT_EQ(state[0].tensor->data()[0], 2.0f);
}

TEST(GradClipping, NormFactorAndScaling) {
  Parameter a = make_parameter(0, "weight", {0, 0}, {3.0f, 0.0f});
  Parameter b = make_parameter(1, "weight", {0}, {4.0f});
  const std::vector<Parameter*> parameters = {&a, &b};
  const double norm_sq = grad_norm_sq(parameters, kernels::cpu_backend());
  EXPECT_DOUBLE_EQ(norm_sq, 25.0);
  EXPECT_DOUBLE_EQ(clip_factor(norm_sq, 10.0), 1.0);  // already within the limit
  EXPECT_DOUBLE_EQ(clip_factor(norm_sq, 0.0), 1.0);   // clipping off
  const double factor = clip_factor(norm_sq, 1.0);
  EXPECT_NEAR(factor, 0.2, 1e-6);
  scale_grads(parameters, factor, kernels::cpu_backend());
  EXPECT_NEAR(std::sqrt(grad_norm_sq(parameters, kernels::cpu_backend())), 1.0, 1e-5);
}

TEST(OptimizerErrors, NameTheKey) {
  auto message_of = [](const config::OptimizerSpec& spec) {
    try {
      make_optimizer(spec, {}, kernels::cpu_backend());
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kConfig);
      return std::string(error.what());
    }
    return std::string("no error");
  };
  config::OptimizerSpec spec;  // the type is an enum: an unknown name is refused by the config parser
  spec.type = config::OptimizerType::kSgd;
  spec.lr = -1;
  EXPECT_NE(message_of(spec).find("optimizer.lr"), std::string::npos);
  spec.lr = 0.1;
  spec.momentum = 1.5;
  EXPECT_NE(message_of(spec).find("optimizer.momentum"), std::string::npos);
  spec.type = config::OptimizerType::kAdamW;
  spec.beta2 = 1.0;
  EXPECT_NE(message_of(spec).find("optimizer.beta2"), std::string::npos);
}

}  // namespace
}  // namespace sluice::model
