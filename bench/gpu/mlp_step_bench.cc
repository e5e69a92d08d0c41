// Step time of a large MLP on CudaBackend (forward, backward, AdamW) against the time of the same step's GEMMs
// alone through cuBLAS, which is the ceiling the rest of the step eats into (issue 7 goal: ratio >= 0.85).
// Backend level: it calls the Backend ops the layer library calls for Linear + activation, without the
// executor, so it times the kernels, not scheduling. Prints one JSON object. NOT YET RUN on a GPU.
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "core/common/error.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/gemm_precision.h"

namespace sluice::kernels {
namespace {

struct Layer {
  Tensor weight, bias, weight_grad, bias_grad, exp_avg_w, exp_avg_sq_w, exp_avg_b, exp_avg_sq_b;
  Tensor input, pre_activation, output;  // stashed for backward
};

class MlpStep {
 public:
  MlpStep(CudaBackend& backend, int layers, int64_t hidden, int64_t rows) : backend_(backend) {
    for (int l = 0; l < layers; ++l) {
      Layer layer;
      layer.weight = backend.zeros(hidden, hidden);
      backend.fill_uniform(init_stream(1, l, 0), -0.02f, 0.02f, layer.weight);
      layer.bias = backend.zeros(1, hidden);
      for (Tensor* t : {&layer.weight_grad, &layer.exp_avg_w, &layer.exp_avg_sq_w}) *t = backend.zeros(hidden, hidden);
      for (Tensor* t : {&layer.bias_grad, &layer.exp_avg_b, &layer.exp_avg_sq_b}) *t = backend.zeros(1, hidden);
      for (Tensor* t : {&layer.pre_activation, &layer.output}) *t = backend.zeros(rows, hidden);
      layers_.push_back(std::move(layer));
    }
    input_ = backend.zeros(rows, hidden);
    backend.fill_uniform(init_stream(2, 0, 0), -1.0f, 1.0f, input_);
    target_ = backend.zeros(rows, hidden);
    grad_ = backend.zeros(rows, hidden);
    grad_in_ = backend.zeros(rows, hidden);
  }

  void full_step(int64_t step) {
    const Tensor* x = &input_;
    for (Layer& layer : layers_) {
      backend_.gemm(Transpose::kNo, Transpose::kNo, 1.0f, *x, layer.weight, 0.0f, layer.pre_activation);
      backend_.add_bias(layer.bias, layer.pre_activation);
      backend_.activation_forward(Activation::kGelu, layer.pre_activation, layer.output);
      x = &layer.output;
    }
    backend_.mse(*x, target_, 1.0f / static_cast<float>(x->size()), grad_);
    for (size_t l = layers_.size(); l-- > 0;) {
      Layer& layer = layers_[l];
      const Tensor& layer_input = l == 0 ? input_ : layers_[l - 1].output;
      backend_.activation_backward(Activation::kGelu, layer.pre_activation, grad_, grad_);
      backend_.accumulate_bias_grad(grad_, layer.bias_grad);
      backend_.gemm(Transpose::kYes, Transpose::kNo, 1.0f, layer_input, grad_, 1.0f, layer.weight_grad);
      backend_.gemm(Transpose::kNo, Transpose::kYes, 1.0f, grad_, layer.weight, 0.0f, grad_in_);
      std::swap(grad_, grad_in_);
    }
    const AdamWHyper hyper;
    for (Layer& layer : layers_) {
      backend_.adamw_update(hyper, step, layer.weight_grad, layer.exp_avg_w, layer.exp_avg_sq_w, layer.weight);
      backend_.adamw_update(hyper, step, layer.bias_grad, layer.exp_avg_b, layer.exp_avg_sq_b, layer.bias);
      backend_.fill(0.0f, layer.weight_grad);
      backend_.fill(0.0f, layer.bias_grad);
    }
  }

  // The three GEMMs per layer of full_step, with nothing else.
  void gemms_only() {
    const Tensor* x = &input_;
    for (Layer& layer : layers_) {
      backend_.gemm(Transpose::kNo, Transpose::kNo, 1.0f, *x, layer.weight, 0.0f, layer.pre_activation);
      x = &layer.pre_activation;
    }
    for (size_t l = layers_.size(); l-- > 0;) {
      Layer& layer = layers_[l];
      const Tensor& layer_input = l == 0 ? input_ : layers_[l - 1].pre_activation;
      backend_.gemm(Transpose::kYes, Transpose::kNo, 1.0f, layer_input, grad_, 1.0f, layer.weight_grad);
      backend_.gemm(Transpose::kNo, Transpose::kYes, 1.0f, grad_, layer.weight, 0.0f, grad_in_);
    }
  }

 private:
  CudaBackend& backend_;
  std::vector<Layer> layers_;
  Tensor input_, target_, grad_, grad_in_;
};

double seconds_per_call(CudaBackend& backend, int warmup, int repeats, const std::function<void(int)>& body) {
  for (int i = 0; i < warmup; ++i) body(i + 1);
  backend.synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) body(warmup + i + 1);
  backend.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeats;
}

}  // namespace
}  // namespace sluice::kernels

int main(int argc, char** argv) {
  using namespace sluice::kernels;
  CLI::App app{"MLP training step vs its GEMMs alone on one GPU"};
  int layers = 8, warmup = 3, repeats = 10;
  int64_t hidden = 4096, rows = 8192;
  std::string precision = "bf16";
  app.add_option("--layers", layers)->check(CLI::PositiveNumber);
  app.add_option("--hidden", hidden)->check(CLI::PositiveNumber);
  app.add_option("--rows", rows, "rows (samples) per step")->check(CLI::PositiveNumber);
  app.add_option("--precision", precision, "fp32 | tf32 | bf16");
  app.add_option("--warmup", warmup)->check(CLI::NonNegativeNumber);
  app.add_option("--repeats", repeats)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  try {
    cuda_device_count();  // throws with the reason when there is no GPU
    CudaBackend backend(0);
    backend.set_gemm_precision(parse_gemm_precision(precision));
    cudaDeviceProp properties{};
    cudaGetDeviceProperties(&properties, 0);
    MlpStep mlp(backend, layers, hidden, rows);
    const double step = seconds_per_call(backend, warmup, repeats, [&](int s) { mlp.full_step(s); });
    const double gemms = seconds_per_call(backend, warmup, repeats, [&](int) { mlp.gemms_only(); });
    std::printf(
      "{\"device\": \"%s\", \"layers\": %d, \"hidden\": %ld, \"rows\": %ld, \"precision\": \"%s\", "
      "\"step_seconds\": %.6f, \"gemm_only_seconds\": %.6f, \"gemm_over_step\": %.4f}\n",
      properties.name, layers, static_cast<long>(hidden), static_cast<long>(rows), precision.c_str(), step, gemms,
      gemms / step);
  } catch (const sluice::Error& e) {
    std::fprintf(stderr, "mlp_step_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
