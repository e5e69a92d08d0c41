// Finite-difference checks of every built-in layer's input and parameter gradients, through both the split
// (backward_input then backward_weight) and the fused (backward) paths. The loss is L = sum(w * y) for a fixed
// random w, so dL/dy = w; the numeric derivative is a central difference of L computed in double from the
// layer's fp32 forward.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/model/activation_layer.h"
#include "core/model/dropout_layer.h"
#include "core/model/layernorm_layer.h"
#include "core/model/linear_layer.h"
#include "core/model/residual_mlp_layer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/test_support.h"

namespace sluice::model {
namespace {

using kernels::Activation;
using kernels::Tensor;
using testing::random_tensor;

constexpr int64_t kBatch = 3;
constexpr int64_t kFeatures = 5;
constexpr double kStep = 1e-3;

struct LayerCase {
  std::string label;
  std::function<std::unique_ptr<Layer>()> make;
};

// Readable test names in failure reports instead of a byte dump.
void PrintTo(const LayerCase& layer_case, std::ostream* out) { *out << layer_case.label; }

std::vector<LayerCase> all_layer_cases() {
  kernels::Backend& backend = kernels::cpu_backend();
  return {
      {"linear_bias", [&] { return std::make_unique<LinearLayer>(backend, kFeatures, 4, true); }},
      {"linear_no_bias", [&] { return std::make_unique<LinearLayer>(backend, kFeatures, 4, false); }},
      {"relu", [&] { return std::make_unique<ActivationLayer>(backend, Activation::kRelu, kFeatures); }},
      {"gelu", [&] { return std::make_unique<ActivationLayer>(backend, Activation::kGelu, kFeatures); }},
      {"tanh", [&] { return std::make_unique<ActivationLayer>(backend, Activation::kTanh, kFeatures); }},
      {"layernorm", [&] { return std::make_unique<LayerNormLayer>(backend, kFeatures, 1e-5f); }},
      {"dropout", [&] { return std::make_unique<DropoutLayer>(backend, kFeatures, 0.4f); }},
      {"residual_mlp_relu", [&] { return std::make_unique<ResidualMlpLayer>(backend, kFeatures, 6, Activation::kRelu); }},
      {"residual_mlp_gelu", [&] { return std::make_unique<ResidualMlpLayer>(backend, kFeatures, 6, Activation::kGelu); }},
      {"residual_mlp_tanh", [&] { return std::make_unique<ResidualMlpLayer>(backend, kFeatures, 6, Activation::kTanh); }},
  };
}

class LayerGradientTest : public ::testing::TestWithParam<LayerCase> {
 protected:
  void SetUp() override {
    layer_ = GetParam().make();
    layer_->set_global_index(3);
    layer_->init(42);
    // Parameters that init to constants (LayerNorm's 1 and 0) get random values so their gradients are general.
    unsigned seed = 100;
    for (Parameter* parameter : layer_->parameters()) {
      Tensor values = random_tensor(parameter->value.rows(), parameter->value.cols(), seed++, 1.0f, 0.1f);
      if (layer_->type() == "layernorm") parameter->value = values;
    }
    input_ = random_tensor(kBatch, layer_->in_features(), 7, 1.0f, 0.2f);
    weights_ = random_tensor(kBatch, layer_->out_features(), 8);
    context_.seed = 11;
    context_.step = 2;
    context_.microbatch = 1;
    context_.layer_index = 3;
    context_.training = true;
  }

  double objective(const Tensor& x) {
    LayerSaved saved;
    const Tensor y = layer_->forward(x, context_, saved);
    double sum = 0.0;
    for (int64_t i = 0; i < y.size(); ++i) sum += static_cast<double>(weights_.data()[i]) * y.data()[i];
    return sum;
  }

  double numeric_derivative(float* value, const Tensor& x) {
    const float original = *value;
    *value = static_cast<float>(original + kStep);
    const double plus = objective(x);
    *value = static_cast<float>(original - kStep);
    const double minus = objective(x);
    *value = original;
    return (plus - minus) / (2.0 * kStep);
  }

  void zero_grads() {
    for (Parameter* parameter : layer_->parameters()) kernels::cpu_backend().fill(0.0f, parameter->grad);
  }

  // Runs forward and the chosen backward; returns dL/dx and leaves parameter grads in the layer.
  Tensor analytic(bool split) {
    zero_grads();
    LayerSaved saved;
    layer_->forward(input_, context_, saved);
    if (!split) return layer_->backward(weights_, saved);
    Tensor dx = layer_->backward_input(weights_, saved);
    layer_->backward_weight(weights_, saved);
    return dx;
  }

  void check_against_finite_differences(bool split) {
    const Tensor dx = analytic(split);
    const std::string mode = split ? "split" : "fused";
    Tensor x = input_;
    for (int64_t i = 0; i < x.size(); ++i) {
      const double numeric = numeric_derivative(x.data() + i, x);
      EXPECT_NEAR(dx.data()[i], numeric, 5e-3 + 1e-2 * std::fabs(numeric)) << mode << " input element " << i;
    }
    for (Parameter* parameter : layer_->parameters()) {
      for (int64_t i = 0; i < parameter->value.size(); ++i) {
        const double numeric = numeric_derivative(parameter->value.data() + i, input_);
        EXPECT_NEAR(parameter->grad.data()[i], numeric, 5e-3 + 1e-2 * std::fabs(numeric))
            << mode << " " << parameter->name << " element " << i;
      }
    }
  }

  std::unique_ptr<Layer> layer_;
  Tensor input_;
  Tensor weights_;
  ForwardContext context_;
};

TEST_P(LayerGradientTest, SplitBackwardMatchesFiniteDifferences) { check_against_finite_differences(true); }

TEST_P(LayerGradientTest, FusedBackwardMatchesFiniteDifferences) { check_against_finite_differences(false); }

TEST_P(LayerGradientTest, GradientIsNotTrivial) {
  // Guards the checks above against passing because everything is zero.
  const Tensor dx = analytic(false);
  double total = kernels::cpu_backend().sum_of_squares(dx);
  for (Parameter* parameter : layer_->parameters()) total += kernels::cpu_backend().sum_of_squares(parameter->grad);
  EXPECT_GT(total, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(AllLayers, LayerGradientTest, ::testing::ValuesIn(all_layer_cases()),
                         [](const ::testing::TestParamInfo<LayerCase>& info) { return info.param.label; });

}  // namespace
}  // namespace sluice::model
