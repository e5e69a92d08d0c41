// How the linear layer's GEMMs use a rank's threads without making the bits depend on the thread count (issue 17
// item 4; kernels/cpu/gemm_split.h). At the pipeline benchmark's shapes (32-row micro-batches, 1024 x 1024
// weights, four layers' weights and gradients in turn) it times
//   1. one layer's three products, F (x W^T) and I (dy W) on oneDNN in column blocks, W (dW += dy^T x) on OpenBLAS
//      in row blocks of dW, with blocks of 1024 (whole), 512 and 256 on one and two threads: what a block costs one
//      thread and what two threads gain;
//   2. the same three products through the CPU backend as shipped, on one and two threads;
//   3. the same through a CPU backend at `precision: bf16` (every product on oneDNN with bf16 operands rounded from
//      the fp32 ones per call, fp32 accumulation and output), where the CPU has avx512_bf16.
// Wall milliseconds, best of 7 rounds of 40 calls (the least disturbed by other processes).
// Run: bazel build -c opt //bench/kernels:routed_gemm_bench && bazel-bin/bench/kernels/routed_gemm_bench
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_gemm.h"
#include "kernels/cpu/parallel_blocks.h"

namespace {

using sluice::kernels::onednn_gemm;
using sluice::kernels::OnednnGemmResult;
using sluice::kernels::Tensor;
using sluice::kernels::Transpose;

constexpr int64_t kRows = 32, kWidth = 1024, kLayers = 4;

Tensor filled(int64_t rows, int64_t cols, float start) {
  Tensor t = Tensor::host(rows, cols);
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = start + 1e-6f * static_cast<float>(i % 4001);
  return t;
}

void report(const char* name, const std::function<void()>& op) {
  constexpr int kRepeats = 40;
  op();
  double best = 1e30;
  for (int round = 0; round < 7; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < kRepeats; ++r) op();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count() / kRepeats);
  }
  std::printf("%-52s %8.4f ms per call\n", name, best);
}

void check(OnednnGemmResult result) {
  if (result != OnednnGemmResult::kDone) std::printf("  (oneDNN did not run the product: no AVX-512?)\n");
}

// A stage's operands: one micro-batch's x and dy, four layers' weights and gradients taken in turn.
struct Operands {
  Tensor x = filled(kRows, kWidth, 0.3f), dy = filled(kRows, kWidth, 0.5f), out = filled(kRows, kWidth, 0.0f);
  std::vector<Tensor> weights, grads;
  int64_t turn = 0;
  Operands() {
    for (int64_t l = 0; l < kLayers; ++l) {
      weights.push_back(filled(kWidth, kWidth, -0.02f));
      grads.push_back(filled(kWidth, kWidth, 0.0f));
    }
  }
  int64_t next_layer() { return turn++ % kLayers; }
};

// F and I in column blocks of `block` (oneDNN), W in row blocks of dW (OpenBLAS on one thread), on `threads`.
void layer_in_blocks(Operands& o, int64_t block, int threads) {
  char name[96];
  std::snprintf(name, sizeof name, "F + I + W, blocks of %4lld, %d thread(s)", static_cast<long long>(block), threads);
  sluice::kernels::set_blas_thread_count(1);
  const int64_t count = kWidth / block;
  report(name, [&] {
    const int64_t l = o.next_layer();
    const float* w = o.weights[l].data();
    sluice::kernels::run_blocks(count, threads, [&](int64_t j) {
      check(onednn_gemm(false, true, kRows, block, kWidth, 1.0f, o.x.data(), kWidth, w + j * block * kWidth, kWidth,
                        0.0f, o.out.data() + j * block, kWidth));
    });
    sluice::kernels::run_blocks(count, threads, [&](int64_t j) {
      check(onednn_gemm(false, false, kRows, block, kWidth, 1.0f, o.dy.data(), kWidth, w + j * block, kWidth, 0.0f,
                        o.out.data() + j * block, kWidth));
    });
    sluice::kernels::run_blocks(count, threads, [&](int64_t j) {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(block), kWidth, kRows, 1.0f,
                  o.dy.data() + j * block, kWidth, o.x.data(), kWidth, 1.0f,
                  o.grads[l].data() + j * block * kWidth, kWidth);
    });
  });
}

void layer_through_backend(Operands& o, int threads, sluice::kernels::Backend& backend, const char* what) {
  char name[96];
  std::snprintf(name, sizeof name, "F + I + W, CPU backend %s, %d thread(s)", what, threads);
  Tensor dx = Tensor::host(kRows, kWidth);
  sluice::kernels::set_blas_thread_count(threads);
  report(name, [&] {
    const int64_t l = o.next_layer();
    backend.gemm(Transpose::kNo, Transpose::kYes, 1.0f, o.x, o.weights[l], 0.0f, o.out);
    backend.gemm(Transpose::kNo, Transpose::kNo, 1.0f, o.dy, o.weights[l], 0.0f, dx);
    backend.gemm(Transpose::kYes, Transpose::kNo, 1.0f, o.dy, o.x, 1.0f, o.grads[l]);
  });
}

}  // namespace

int main() {
  Operands o;
  for (int threads : {1, 2}) {
    for (int64_t block : {int64_t{1024}, int64_t{512}, int64_t{256}}) {
      if (threads > 1 && block == kWidth) continue;  // one block has nothing to share
      layer_in_blocks(o, block, threads);
    }
  }
  for (int threads : {1, 2}) layer_through_backend(o, threads, sluice::kernels::cpu_backend(), "as shipped");
  const std::string missing = sluice::kernels::onednn_bf16_gemm_missing();
  if (!missing.empty()) {
    std::printf("no bf16 products: %s\n", missing.c_str());
    return 0;
  }
  sluice::kernels::CpuBackend bf16;
  bf16.set_gemm_precision(sluice::kernels::GemmPrecision::kBf16);
  for (int threads : {1, 2}) layer_through_backend(o, threads, bf16, "precision bf16");
  return 0;
}
