// CPU time of the CPU backend's AdamW step and GELU forward/backward at the pipeline benchmark model's sizes
// (issue 17): per rank ~4.2 M parameters (4 x linear 1024x1024 + bias), GELU over one microbatch's activations
// (32 x 1024) per layer. Single-threaded; reports user CPU seconds (getrusage) per call, which is less disturbed
// by other processes on a shared machine than wall time.
// Run: bazel build -c opt //bench/kernels:cpu_kernels_bench && bazel-bin/bench/kernels/cpu_kernels_bench
#include <sys/resource.h>

#include <cstdio>
#include <functional>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"

namespace {

using sluice::kernels::Tensor;

double user_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec) + 1e-6 * static_cast<double>(usage.ru_utime.tv_usec);
}

Tensor filled(int64_t rows, int64_t cols, float start) {
  Tensor t = Tensor::host(rows, cols);
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = start + 1e-6f * static_cast<float>(i % 4001) - 2e-3f;
  return t;
}

// Runs `op` `repeats` times and prints the user CPU milliseconds per call.
void report(const char* name, int repeats, const std::function<void()>& op) {
  op();  // warm the caches and page in the tensors
  const double start = user_seconds();
  for (int r = 0; r < repeats; ++r) op();
  const double used = user_seconds() - start;
  std::printf("%-44s %8.3f ms user CPU per call (%d calls, %.2f s)\n", name, 1e3 * used / repeats, repeats, used);
}

// The linear layer's three GEMMs (core/model/affine.cc) at the model's shapes, one weight per layer as in a chunk:
// F computes x W^T (N, T), I dy W (N, N), W accumulates dy^T x into the gradient (T, N, beta 1). I + W is what a
// fused B costs in GEMMs; F against I shows whether the forward orientation itself is slower per FLOP (issue 17).
void report_gemm_orientations(sluice::kernels::Backend& backend, int64_t width, int64_t layers, int64_t rows) {
  using sluice::kernels::Transpose;
  std::vector<Tensor> weights, weight_grads;
  for (int64_t l = 0; l < layers; ++l) {
    weights.push_back(filled(width, width, -0.02f));
    weight_grads.push_back(filled(width, width, 0.0f));
  }
  Tensor x = filled(rows, width, 0.3f), dy = filled(rows, width, 0.5f), out = Tensor::host(rows, width);
  report("GEMM F  x W^T (N,T), 4 layers", 100, [&] {
    for (int64_t l = 0; l < layers; ++l) backend.gemm(Transpose::kNo, Transpose::kYes, 1.0f, x, weights[l], 0.0f, out);
  });
  // The same product transposed, y^T = W x^T into [1024 x 32]: a candidate for F (OpenBLAS handles it faster).
  Tensor out_transposed = Tensor::host(width, rows);
  report("GEMM F' y^T = W x^T (N,T) -> [1024x32], 4 layers", 100, [&] {
    for (int64_t l = 0; l < layers; ++l) {
      backend.gemm(Transpose::kNo, Transpose::kYes, 1.0f, weights[l], x, 0.0f, out_transposed);
    }
  });
  report("GEMM I  dy W (N,N), 4 layers", 100, [&] {
    for (int64_t l = 0; l < layers; ++l) backend.gemm(Transpose::kNo, Transpose::kNo, 1.0f, dy, weights[l], 0.0f, out);
  });
  report("GEMM W  dW += dy^T x (T,N), 4 layers", 100, [&] {
    for (int64_t l = 0; l < layers; ++l) {
      backend.gemm(Transpose::kYes, Transpose::kNo, 1.0f, dy, x, 1.0f, weight_grads[l]);
    }
  });
  report("F's output allocation, 2 x 32x1024 x 4", 200, [&] {
    for (int64_t l = 0; l < 2 * layers; ++l) {
      Tensor fresh = backend.empty(rows, width);
      for (int64_t i = 0; i < fresh.size(); i += 1024) fresh.data()[i] = 1.0f;  // touch every page, as the GEMM will
    }
  });
}

}  // namespace

int main() {
  using namespace sluice::kernels;
  set_blas_thread_count(1);  // as each pipeline rank runs (OPENBLAS_NUM_THREADS=1); user CPU would sum the threads
  Backend& backend = cpu_backend();
  const int64_t width = 1024, layers = 4, rows = 32;
  std::vector<Tensor> grads, m1, m2, params;
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t cols : {width * width, width}) {  // weight and bias as flat rows
      grads.push_back(filled(1, cols, 0.01f));
      m1.push_back(filled(1, cols, 0.0f));
      m2.push_back(filled(1, cols, 0.001f));
      params.push_back(filled(1, cols, 0.1f));
    }
  }
  AdamWHyper adamw;
  adamw.weight_decay = 0.01f;
  int64_t step = 0;
  report("AdamW step, 4 x (1024x1024 + 1024) params", 20, [&] {
    ++step;
    for (size_t i = 0; i < params.size(); ++i) backend.adamw_update(adamw, step, grads[i], m1[i], m2[i], params[i]);
  });
  SgdHyper sgd;
  sgd.momentum = 0.9f;
  report("SGD step, same params", 20, [&] {
    for (size_t i = 0; i < params.size(); ++i) backend.sgd_update(sgd, grads[i], m1[i], params[i]);
  });
  Tensor bias = filled(1, width, 0.0f), pre = filled(rows, width, -1.0f), y = Tensor::host(rows, width);
  Tensor dy = filled(rows, width, 0.5f), dx = Tensor::host(rows, width);
  report("GELU bias+forward, 4 layers x 32x1024", 200, [&] {
    for (int64_t l = 0; l < layers; ++l) {
      backend.bias_activation_forward(Activation::kGelu, bias, pre, y);
    }
  });
  report("GELU backward, 4 layers x 32x1024", 200, [&] {
    for (int64_t l = 0; l < layers; ++l) backend.activation_backward(Activation::kGelu, pre, dy, dx);
  });
  report_gemm_orientations(backend, width, layers, rows);
  return 0;
}
