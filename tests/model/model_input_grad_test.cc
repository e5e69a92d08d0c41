// Nobody uses dL/d(model input), so the stage holding global layer 0 does not compute it:
// - every layer type's backward_input_without_dx / backward_without_dx leaves the same W inputs and accumulates
//   the same parameter gradients, to the bit, as backward_input / backward;
// - a stage holding layer 0 returns an EMPTY input gradient from backward_input and backward, with outputs and
//   parameter gradients bit-identical to the same stage computing it (skip_model_input_grad = false), for split
//   (I then W) and fused (B) backward under every recompute mode; a stage not holding layer 0 still returns it;
// - a GEMM-counting backend shows the saving: one GEMM fewer per micro-batch, in I and in B, for a first linear
//   layer (and for a first residual MLP: fc1's dx), none for a first activation, which keeps the default.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/model/builder.h"
#include "core/model/partition.h"
#include "core/model/stage_module.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/test_support.h"

namespace sluice::model {
namespace {

using kernels::Tensor;
using testing::bits_equal;
using testing::layer_spec;
using testing::linear_spec;
using testing::random_tensor;

constexpr int kMicrobatches = 3;
constexpr int64_t kRows = 5;
constexpr bool kFuse = true;

// The CPU backend, counting GEMMs.
class GemmCountingBackend : public kernels::CpuBackend {
 public:
  int gemm_calls = 0;

 protected:
  void gemm_impl(kernels::Transpose transpose_a, kernels::Transpose transpose_b, float alpha, const Tensor& a,
                 const Tensor& b, float beta, Tensor& c) override {
    ++gemm_calls;
    CpuBackend::gemm_impl(transpose_a, transpose_b, alpha, a, b, beta, c);
  }
};

config::LayerSpec residual_mlp(int64_t hidden, const std::string& activation) {
  config::LayerSpec spec = layer_spec("residual_mlp");
  spec.hidden = hidden;
  spec.activation = kernels::parse_activation(activation);
  return spec;
}

config::LayerSpec dropout(double p) {
  config::LayerSpec spec = layer_spec("dropout");
  spec.p = p;
  return spec;
}

config::ModelSpec model(std::vector<config::LayerSpec> layers) {
  config::ModelSpec spec;
  spec.inputs = 6;
  spec.layers = std::move(layers);
  return spec;
}

// A model over fields of `shape` [C, D..].
config::ModelSpec field_model(config::SampleShape shape, std::vector<config::LayerSpec> layers) {
  config::ModelSpec spec = model(std::move(layers));
  spec.inputs = config::features_of(shape);
  spec.input_shape = std::move(shape);
  return spec;
}

config::LayerSpec spectral(const std::string& type, int64_t channels, std::vector<int64_t> modes) {
  config::LayerSpec spec = layer_spec(type);
  spec.channels = channels;
  spec.modes = std::move(modes);
  return spec;
}

// Models whose first layer is each kind that matters: a linear layer (its own override), a residual MLP (its own
// override), and the default path (an activation, dropout, layernorm).
struct ModelCase {
  std::string label;
  config::ModelSpec spec;
};

std::vector<ModelCase> model_cases() {
  return {
      {"linear first", model({linear_spec(8), layer_spec("gelu"), dropout(0.25), residual_mlp(12, "gelu"),
                              layer_spec("layernorm"), layer_spec("tanh"), linear_spec(3, false)})},
      {"linear without bias first", model({linear_spec(8, false), layer_spec("relu"), linear_spec(3)})},
      {"residual_mlp first", model({residual_mlp(10, "relu"), linear_spec(7), layer_spec("tanh"), linear_spec(3)})},
      {"gelu first", model({layer_spec("gelu"), linear_spec(8), layer_spec("relu"), linear_spec(3)})},
      {"dropout first", model({dropout(0.3), linear_spec(8), layer_spec("relu"), linear_spec(3)})},
      {"layernorm first", model({layer_spec("layernorm"), linear_spec(4), layer_spec("gelu"), linear_spec(3)})},
      {"spectral_conv first", field_model({2, 4, 6}, {spectral("spectral_conv", 3, {2, 3}), layer_spec("gelu"),
                                                        spectral("fno_block", 2, {1, 4}), layer_spec("flatten"),
                                                        linear_spec(3)})},
      {"fno_block first", field_model({2, 6}, {spectral("fno_block", 3, {3}), layer_spec("flatten"), linear_spec(3)})},
  };
}

std::vector<std::unique_ptr<Layer>> initialised(const config::ModelSpec& spec, kernels::Backend& backend) {
  auto layers = build_layers(spec, backend);
  init_layers(layers, 21);
  // LayerNorm initialises to 1 and 0; give every parameter a general value so no gradient is trivially equal.
  unsigned seed = 300;
  for (auto& layer : layers) {
    for (Parameter* parameter : layer->parameters()) {
      parameter->value = random_tensor(parameter->value.rows(), parameter->value.cols(), seed++, 1.0f, 0.1f);
    }
  }
  return layers;
}

TEST(ModelInputGrad, EveryLayerTypeAccumulatesTheSameGradientsWithoutDx) {
  for (const ModelCase& model_case : model_cases()) {
    // Four copies of the model: backward, backward_input + backward_weight, and the two without dx.
    auto with_dx_fused = initialised(model_case.spec, kernels::cpu_backend());
    auto with_dx_split = initialised(model_case.spec, kernels::cpu_backend());
    auto without_dx_split = initialised(model_case.spec, kernels::cpu_backend());
    auto without_dx_fused = initialised(model_case.spec, kernels::cpu_backend());
    Tensor x = random_tensor(kRows, model_case.spec.inputs, 1, 1.0f, 0.05f);
    for (size_t i = 0; i < with_dx_fused.size(); ++i) {
      Layer* layers[] = {with_dx_fused[i].get(), with_dx_split[i].get(), without_dx_split[i].get(),
                         without_dx_fused[i].get()};
      const std::string label = model_case.label + ", layer " + std::to_string(i) + " " + layers[0]->type();
      // Start from the same non-zero gradients, as after earlier micro-batches.
      unsigned seed = 50;
      for (size_t p = 0; p < layers[0]->parameters().size(); ++p) {
        const Tensor& grad = layers[0]->parameters()[p]->grad;
        const Tensor start = random_tensor(grad.rows(), grad.cols(), seed++);
        for (Layer* layer : layers) layer->parameters()[p]->grad = start;
      }
      const ForwardContext context{1, 2, 3, static_cast<int>(i), true};
      LayerSaved saved[4];
      Tensor y = layers[0]->forward(x, context, saved[0]);
      for (int k = 1; k < 4; ++k) ASSERT_TRUE(bits_equal(y, layers[k]->forward(x, context, saved[k]))) << label;
      const Tensor dy = random_tensor(y.rows(), y.cols(), 60 + static_cast<unsigned>(i));

      const Tensor dx = layers[0]->backward(dy, saved[0]);
      EXPECT_EQ(dx.rows(), kRows) << label;
      layers[1]->backward_input(dy, saved[1]);
      layers[2]->backward_input_without_dx(dy, saved[2]);
      // What W will read is the same whether or not I computed dx.
      ASSERT_EQ(saved[1].weight_grad_inputs.size(), saved[2].weight_grad_inputs.size()) << label;
      for (size_t t = 0; t < saved[1].weight_grad_inputs.size(); ++t) {
        EXPECT_TRUE(bits_equal(saved[1].weight_grad_inputs[t], saved[2].weight_grad_inputs[t])) << label;
      }
      layers[1]->backward_weight(dy, saved[1]);
      layers[2]->backward_weight(dy, saved[2]);
      layers[3]->backward_without_dx(dy, saved[3]);

      for (size_t p = 0; p < layers[0]->parameters().size(); ++p) {
        const Tensor& reference = layers[0]->parameters()[p]->grad;
        const std::string name = label + " " + layers[0]->parameters()[p]->name;
        EXPECT_TRUE(bits_equal(reference, layers[1]->parameters()[p]->grad)) << name << " (split)";
        EXPECT_TRUE(bits_equal(reference, layers[2]->parameters()[p]->grad)) << name << " (I without dx, W)";
        EXPECT_TRUE(bits_equal(reference, layers[3]->parameters()[p]->grad)) << name << " (B without dx)";
      }
      x = y;
    }
  }
}

struct StageRun {
  std::vector<Tensor> outputs;
  std::vector<Tensor> input_grads;
  std::vector<Tensor> param_grads;
};

// All forwards, then B for micro-batch 1 and split I/W for 0 and 2 (W after both I's, as zero-bubble runs).
StageRun run(StageModule& stage) {
  StageRun result;
  const StepInfo step{7, 3, true};
  for (int mb = 0; mb < kMicrobatches; ++mb) {
    result.outputs.push_back(stage.forward(mb, random_tensor(kRows, stage.in_features(), 10 + mb), step));
  }
  result.input_grads.resize(kMicrobatches);
  result.input_grads[1] = stage.backward(1, random_tensor(kRows, stage.out_features(), 21));
  result.input_grads[0] = stage.backward_input(0, random_tensor(kRows, stage.out_features(), 20));
  result.input_grads[2] = stage.backward_input(2, random_tensor(kRows, stage.out_features(), 22));
  stage.backward_weight(0);
  stage.backward_weight(2);
  for (Parameter* parameter : stage.parameters()) result.param_grads.push_back(parameter->grad);
  EXPECT_EQ(stage.stashed_microbatches(), 0u);
  return result;
}

TEST(ModelInputGrad, FirstStageReturnsEmptyInputGradWithBitIdenticalParameterGradients) {
  const std::vector<std::pair<std::string, RecomputePolicy>> policies = {
      {"none", {RecomputeMode::kNone, {}}},
      {"full", {RecomputeMode::kFull, {}}},
      {"selective 0,1", {RecomputeMode::kSelective, {0, 1}}},
  };
  for (const ModelCase& model_case : model_cases()) {
    for (const auto& [policy_label, policy] : policies) {
      const std::string label = model_case.label + ", recompute " + policy_label;
      StageModule skipping(kernels::cpu_backend(), 0, initialised(model_case.spec, kernels::cpu_backend()), policy,
                           kFuse, /*skip_model_input_grad=*/true);
      StageModule computing(kernels::cpu_backend(), 0, initialised(model_case.spec, kernels::cpu_backend()), policy,
                            kFuse, /*skip_model_input_grad=*/false);
      EXPECT_TRUE(skipping.skips_input_grad()) << label;
      EXPECT_FALSE(computing.skips_input_grad()) << label;
      const StageRun skipped = run(skipping);
      const StageRun computed = run(computing);
      for (int mb = 0; mb < kMicrobatches; ++mb) {
        EXPECT_TRUE(bits_equal(skipped.outputs[mb], computed.outputs[mb])) << label << " output " << mb;
        EXPECT_EQ(skipped.input_grads[mb].rows(), 0) << label << " micro-batch " << mb;
        EXPECT_EQ(skipped.input_grads[mb].cols(), 0) << label << " micro-batch " << mb;
        EXPECT_EQ(computed.input_grads[mb].rows(), kRows) << label << " micro-batch " << mb;
        EXPECT_EQ(computed.input_grads[mb].cols(), model_case.spec.inputs) << label << " micro-batch " << mb;
      }
      ASSERT_EQ(skipped.param_grads.size(), computed.param_grads.size()) << label;
      ASSERT_FALSE(skipped.param_grads.empty()) << label;
      for (size_t i = 0; i < skipped.param_grads.size(); ++i) {
        EXPECT_TRUE(bits_equal(skipped.param_grads[i], computed.param_grads[i])) << label << " param grad " << i;
        EXPECT_GT(kernels::cpu_backend().sum_of_squares(skipped.param_grads[i]), 0.0) << label << " param grad " << i;
      }
    }
  }
}

TEST(ModelInputGrad, OnlyTheStageHoldingLayerZeroSkipsIt) {
  for (const ModelCase& model_case : model_cases()) {
    auto all = initialised(model_case.spec, kernels::cpu_backend());
    const int count = static_cast<int>(all.size());
    auto same = initialised(model_case.spec, kernels::cpu_backend());
    // Global layers 1.. as a later stage: the default still returns its input gradient, as the pipeline needs.
    StageModule later(kernels::cpu_backend(), 1, take_layers(all, LayerRange{1, count}));
    StageModule later_computing(kernels::cpu_backend(), 1, take_layers(same, LayerRange{1, count}), {}, kFuse,
                                /*skip_model_input_grad=*/false);
    EXPECT_FALSE(later.skips_input_grad()) << model_case.label;
    const StageRun a = run(later);
    const StageRun b = run(later_computing);
    for (int mb = 0; mb < kMicrobatches; ++mb) {
      EXPECT_EQ(a.input_grads[mb].rows(), kRows) << model_case.label << " micro-batch " << mb;
      EXPECT_EQ(a.input_grads[mb].cols(), later.in_features()) << model_case.label << " micro-batch " << mb;
      EXPECT_TRUE(bits_equal(a.input_grads[mb], b.input_grads[mb])) << model_case.label << " micro-batch " << mb;
    }
  }
}

struct GemmCounts {
  int input = 0;   // during backward_input of every micro-batch
  int weight = 0;  // during backward_weight of every micro-batch
  int fused = 0;   // during backward of every micro-batch
};

GemmCounts count_backward_gemms(const config::ModelSpec& spec, bool skip_model_input_grad) {
  GemmCounts counts;
  GemmCountingBackend backend;
  const StepInfo step{7, 3, true};
  for (const bool split : {true, false}) {
    StageModule stage(backend, 0, initialised(spec, backend), {}, kFuse, skip_model_input_grad);
    for (int mb = 0; mb < kMicrobatches; ++mb) stage.forward(mb, random_tensor(kRows, spec.inputs, mb), step);
    for (int mb = 0; mb < kMicrobatches; ++mb) {
      const Tensor grad = random_tensor(kRows, stage.out_features(), 40 + mb);
      const int before = backend.gemm_calls;
      if (split) {
        stage.backward_input(mb, grad);
        counts.input += backend.gemm_calls - before;
        const int before_weight = backend.gemm_calls;
        stage.backward_weight(mb);
        counts.weight += backend.gemm_calls - before_weight;
      } else {
        stage.backward(mb, grad);
        counts.fused += backend.gemm_calls - before;
      }
    }
  }
  return counts;
}

TEST(ModelInputGrad, AFirstLinearLayerRunsOneGemmFewerPerMicrobatch) {
  // linear, gelu, linear: I computes dx of both linears (2 GEMMs) unless layer 0's is skipped; W computes both
  // weight gradients (2 GEMMs) either way.
  const config::ModelSpec mlp = model({linear_spec(8), layer_spec("gelu"), linear_spec(3)});
  const GemmCounts computed = count_backward_gemms(mlp, false);
  const GemmCounts skipped = count_backward_gemms(mlp, true);
  EXPECT_EQ(computed.input, 2 * kMicrobatches);
  EXPECT_EQ(skipped.input, 1 * kMicrobatches);
  EXPECT_EQ(computed.weight, 2 * kMicrobatches);
  EXPECT_EQ(skipped.weight, 2 * kMicrobatches);
  EXPECT_EQ(computed.fused, 4 * kMicrobatches);
  EXPECT_EQ(skipped.fused, 3 * kMicrobatches);

  // A first residual MLP skips fc1's dx GEMM; a first activation keeps the default path (no GEMM to save).
  const std::vector<std::pair<config::ModelSpec, int>> saved_per_microbatch = {
      {model({linear_spec(8, false), layer_spec("relu"), linear_spec(3)}), 1},
      {model({residual_mlp(10, "gelu"), linear_spec(3)}), 1},
      {model({layer_spec("gelu"), linear_spec(3)}), 0},
  };
  for (const auto& [spec, saved] : saved_per_microbatch) {
    const GemmCounts with = count_backward_gemms(spec, false);
    const GemmCounts without = count_backward_gemms(spec, true);
    const std::string label = config::layer_type_name(spec.layers.front().type);
    EXPECT_EQ(with.input - without.input, saved * kMicrobatches) << label;
    EXPECT_EQ(with.weight, without.weight) << label;
    EXPECT_EQ(with.fused - without.fused, saved * kMicrobatches) << label;
    EXPECT_GT(without.weight, 0) << label;
  }
}

}  // namespace
}  // namespace sluice::model
