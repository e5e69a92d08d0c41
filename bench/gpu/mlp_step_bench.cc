// One training step of a large MLP through Sluice's own model stack on one GPU (the layers a config builds,
// StageModule with its fused linear + activation, MSE loss, the multi-tensor AdamW), timed against:
//   gemm_only:            the same step's GEMMs (recorded while a step runs) replayed through cuBLAS on operands
//                         already in the GEMM's input type: the ceiling the rest of the step eats into (issue 7
//                         goal: gemm_only / step >= 0.85);
//   gemm_with_conversion: the same GEMMs through CudaBackend::gemm on fp32 tensors, which in bf16 mode converts
//                         both operands on every call; the difference to gemm_only is what that conversion costs.
// bench/gpu/torch_mlp.py runs the same model, batch and precision in PyTorch. Prints one JSON object.
// Written without a GPU: NOT YET RUN on one.
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/gpu/gemm_recording_backend.h"
#include "core/common/error.h"
#include "core/config/config.h"
#include "core/model/builder.h"
#include "core/model/loss.h"
#include "core/model/optimizer.h"
#include "core/model/stage_module.h"
#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/gemm_precision.h"

namespace sluice::bench {
namespace {

using kernels::GemmCall;
using kernels::GemmPrecision;
using kernels::GemmRecordingBackend;
using kernels::Tensor;

struct Options {
  int layers = 8;
  int64_t hidden = 4096;
  int64_t rows = 8192;  // samples per step, split over the micro-batches
  int microbatches = 1;
  std::string precision = "bf16";
  int warmup = 3;
  int repeats = 10;
};

// [linear(hidden) + gelu] x layers, as torch_mlp.py builds it: each linear fuses with its GELU in the stage.
config::ModelSpec mlp_spec(const Options& options) {
  config::ModelSpec spec;
  spec.inputs = options.hidden;
  for (int l = 0; l < options.layers; ++l) {
    config::LayerSpec linear;
    linear.type = config::LayerType::kLinear;
    linear.outputs = options.hidden;
    config::LayerSpec gelu;
    gelu.type = config::LayerType::kGelu;
    spec.layers.push_back(linear);
    spec.layers.push_back(gelu);
  }
  return spec;
}

Tensor uniform_tensor(kernels::Backend& backend, int64_t rows, int64_t cols, uint64_t seed) {
  Tensor tensor = backend.zeros(rows, cols);
  backend.fill_uniform(kernels::init_stream(seed, 0, 0), -1.0f, 1.0f, tensor);
  return tensor;
}

// The training step of a single-stage pipeline, as the trainer runs it: zero the gradients, forward, loss and
// backward per micro-batch, one optimizer update.
class MlpStep {
 public:
  MlpStep(kernels::Backend& backend, const Options& options) : backend_(backend), options_(options) {
    auto layers = model::build_layers(mlp_spec(options), backend);
    model::init_layers(layers, 1);
    stage_ = std::make_unique<model::StageModule>(backend, 0, std::move(layers));
    config::OptimizerSpec adamw;
    adamw.type = config::OptimizerType::kAdamW;
    optimizer_ = model::make_optimizer(adamw, stage_->parameters(), backend);
    const int64_t mb_rows = options.rows / options.microbatches;
    for (int mb = 0; mb < options.microbatches; ++mb) {
      inputs_.push_back(uniform_tensor(backend, mb_rows, options.hidden, 2 + mb));
      targets_.push_back(backend.zeros(mb_rows, options.hidden));
    }
  }

  void run(int64_t step) {
    stage_->zero_grad();
    for (int mb = 0; mb < options_.microbatches; ++mb) {
      // A copy, as a fresh batch would arrive each step; the stage keeps its input until the backward.
      Tensor output = stage_->forward(mb, inputs_[mb], model::StepInfo{1, static_cast<uint64_t>(step), true});
      model::LossResult loss = model::compute_loss(backend_, model::LossKind::kMse, output, targets_[mb], options_.rows);
      stage_->backward(mb, std::move(loss.grad));
    }
    optimizer_->step();
  }

 private:
  kernels::Backend& backend_;
  Options options_;
  std::unique_ptr<model::StageModule> stage_;
  std::unique_ptr<model::Optimizer> optimizer_;
  std::vector<Tensor> inputs_, targets_;
};

// fp32 -> bf16 bits, round to nearest even (finite inputs), as __float2bfloat16_rn does.
uint16_t to_bf16_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// Device memory holding `count` random operands in `precision`'s GEMM input type. Random, not zeros: tensor
// cores draw less power (and clock higher) on zeros, which would flatter the ceiling.
class ReadyOperand {
 public:
  ReadyOperand(GemmPrecision precision, int64_t count, unsigned seed) {
    const size_t element = static_cast<size_t>(kernels::gemm_operand_bytes(precision));
    std::vector<unsigned char> host(static_cast<size_t>(count) * element);
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int64_t i = 0; i < count; ++i) {
      const float value = uniform(generator);
      if (element == 2) {
        const uint16_t bits = to_bf16_bits(value);
        std::memcpy(&host[static_cast<size_t>(i) * 2], &bits, 2);
      } else {
        std::memcpy(&host[static_cast<size_t>(i) * 4], &value, 4);
      }
    }
    kernels::check_cuda(cudaMalloc(&data_, host.size()), "cudaMalloc (benchmark operand)");
    kernels::check_cuda(cudaMemcpy(data_, host.data(), host.size(), cudaMemcpyHostToDevice),
                        "cudaMemcpy (benchmark operand)");
  }
  ~ReadyOperand() { cudaFree(data_); }
  ReadyOperand(const ReadyOperand&) = delete;
  ReadyOperand& operator=(const ReadyOperand&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

// The recorded GEMMs on ready operands (one buffer per operand, as large as the largest call needs).
class GemmReplay {
 public:
  GemmReplay(GemmRecordingBackend& backend, std::vector<GemmCall> calls) : backend_(backend), calls_(std::move(calls)) {
    int64_t a = 1, b = 1, c = 1;
    for (const GemmCall& call : calls_) {
      a = std::max(a, call.m * call.k);
      b = std::max(b, call.k * call.n);
      c = std::max(c, call.m * call.n);
    }
    const GemmPrecision precision = backend.gemm_precision();
    a_ = std::make_unique<ReadyOperand>(precision, a, 11);
    b_ = std::make_unique<ReadyOperand>(precision, b, 12);
    c_ = std::make_unique<ReadyOperand>(GemmPrecision::kFp32, c, 13);
    kernels::check_cublas(cublasCreate(&handle_), "cublasCreate");
    kernels::check_cublas(cublasSetStream(handle_, backend.stream()), "cublasSetStream");
  }
  ~GemmReplay() { cublasDestroy(handle_); }

  void run() {
    for (const GemmCall& call : calls_) {
      kernels::row_major_gemm(handle_, backend_.gemm_precision(), call.transpose_a, call.transpose_b, call.m, call.n,
                              call.k, call.alpha, a_->data(), call.a_cols, b_->data(), call.b_cols, call.beta,
                              static_cast<float*>(c_->data()), call.n);
    }
  }

 private:
  GemmRecordingBackend& backend_;
  std::vector<GemmCall> calls_;
  std::unique_ptr<ReadyOperand> a_, b_, c_;
  cublasHandle_t handle_ = nullptr;
};

// The recorded GEMMs through CudaBackend::gemm on fp32 tensors of the recorded shapes.
class ConvertingReplay {
 public:
  ConvertingReplay(GemmRecordingBackend& backend, std::vector<GemmCall> calls)
      : backend_(backend), calls_(std::move(calls)) {
    for (const GemmCall& call : calls_) {
      const bool ta = call.transpose_a == kernels::Transpose::kYes;
      const bool tb = call.transpose_b == kernels::Transpose::kYes;
      tensor('a', ta ? call.k : call.m, call.a_cols);
      tensor('b', tb ? call.n : call.k, call.b_cols);
      tensor('c', call.m, call.n);
    }
  }

  void run() {
    for (const GemmCall& call : calls_) {
      const bool ta = call.transpose_a == kernels::Transpose::kYes;
      const bool tb = call.transpose_b == kernels::Transpose::kYes;
      backend_.gemm(call.transpose_a, call.transpose_b, call.alpha, tensor('a', ta ? call.k : call.m, call.a_cols),
                    tensor('b', tb ? call.n : call.k, call.b_cols), call.beta, tensor('c', call.m, call.n));
    }
  }

 private:
  // One tensor per operand role and shape, made on first use; the output never aliases an input.
  Tensor& tensor(char role, int64_t rows, int64_t cols) {
    const auto key = std::make_tuple(role, rows, cols);
    auto found = tensors_.find(key);
    if (found != tensors_.end()) return found->second;
    return tensors_.emplace(key, uniform_tensor(backend_, rows, cols, 20 + tensors_.size())).first->second;
  }

  GemmRecordingBackend& backend_;
  std::vector<GemmCall> calls_;
  std::map<std::tuple<char, int64_t, int64_t>, Tensor> tensors_;
};

double seconds_per_call(kernels::CudaBackend& backend, const Options& options, const std::function<void(int)>& body) {
  for (int i = 0; i < options.warmup; ++i) body(i + 1);
  backend.synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.repeats; ++i) body(options.warmup + i + 1);
  backend.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / options.repeats;
}

// Highest bytes in use in the device's default pool (where CudaBuffer allocates) since the last reset.
uint64_t pool_high_water(int device, bool reset) {
  cudaMemPool_t pool = nullptr;
  kernels::check_cuda(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  uint64_t value = 0;
  if (reset) {
    kernels::check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &value),
                        "cudaMemPoolSetAttribute (used high)");
  }
  kernels::check_cuda(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &value),
                      "cudaMemPoolGetAttribute (used high)");
  return value;
}

int run(const Options& options) {
  if (options.rows % options.microbatches != 0) {
    std::fprintf(stderr, "mlp_step_bench: --rows %ld is not a multiple of --microbatches %d\n",
                 static_cast<long>(options.rows), options.microbatches);
    return 2;
  }
  kernels::cuda_device_count();  // throws with the reason when there is no GPU
  GemmRecordingBackend backend(0);
  backend.set_gemm_precision(kernels::parse_gemm_precision(options.precision));
  cudaDeviceProp properties{};
  kernels::check_cuda(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");

  MlpStep mlp(backend, options);
  mlp.run(1);  // first step: allocations fill the pool
  backend.synchronize();
  pool_high_water(0, true);
  backend.start_recording();
  mlp.run(2);
  backend.stop_recording();
  backend.synchronize();
  const uint64_t peak_bytes = pool_high_water(0, false);
  const size_t gemm_calls = backend.calls().size();

  const double step = seconds_per_call(backend, options, [&](int s) { mlp.run(2 + s); });
  GemmReplay ready(backend, backend.calls());
  const double gemm_only = seconds_per_call(backend, options, [&](int) { ready.run(); });
  ConvertingReplay converting(backend, backend.calls());
  const double gemm_converting = seconds_per_call(backend, options, [&](int) { converting.run(); });

  std::printf(
      "{\"device\": \"%s\", \"layers\": %d, \"hidden\": %ld, \"rows\": %ld, \"microbatches\": %d, "
      "\"precision\": \"%s\", \"step_seconds\": %.6f, \"gemm_only_seconds\": %.6f, "
      "\"gemm_with_conversion_seconds\": %.6f, \"gemm_over_step\": %.4f, \"gemm_calls_per_step\": %zu, "
      "\"peak_pool_bytes\": %llu}\n",
      properties.name, options.layers, static_cast<long>(options.hidden), static_cast<long>(options.rows),
      options.microbatches, options.precision.c_str(), step, gemm_only, gemm_converting, gemm_only / step, gemm_calls,
      static_cast<unsigned long long>(peak_bytes));
  return 0;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  sluice::bench::Options options;
  CLI::App app{"Sluice MLP training step vs its GEMMs alone on one GPU"};
  app.add_option("--layers", options.layers, "linear + GELU pairs")->check(CLI::PositiveNumber);
  app.add_option("--hidden", options.hidden)->check(CLI::PositiveNumber);
  app.add_option("--rows", options.rows, "samples per step")->check(CLI::PositiveNumber);
  app.add_option("--microbatches", options.microbatches, "micro-batches per step")->check(CLI::PositiveNumber);
  app.add_option("--precision", options.precision, "fp32 | tf32 | bf16");
  app.add_option("--warmup", options.warmup)->check(CLI::NonNegativeNumber);
  app.add_option("--repeats", options.repeats)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    return sluice::bench::run(options);
  } catch (const sluice::Error& e) {
    std::fprintf(stderr, "mlp_step_bench: %s\n", e.what());
    return 1;
  }
}
