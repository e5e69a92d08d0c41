// A CudaBackend that notes the shape of every GEMM it runs while recording, so a benchmark can time exactly the
// GEMMs of one training step on their own ("the ceiling the rest of the step eats into") without knowing how
// the layers call them.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_backend.h"

namespace sluice::kernels {

struct GemmCall {
  Transpose transpose_a;
  Transpose transpose_b;
  int64_t m, n, k;                   // op(a) is [m][k], op(b) [k][n], c [m][n]
  int64_t a_cols, b_cols;            // row lengths of a and b as stored
  float alpha, beta;
};

class GemmRecordingBackend : public CudaBackend {
 public:
  using CudaBackend::CudaBackend;

  void start_recording() {
    calls_.clear();
    recording_ = true;
  }
  void stop_recording() { recording_ = false; }
  const std::vector<GemmCall>& calls() const { return calls_; }

 protected:
  // Operands already checked by Backend::gemm.
  void gemm_impl(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b,
                 float beta, Tensor& c) override {
    if (recording_) {
      const bool ta = transpose_a == Transpose::kYes;
      const bool tb = transpose_b == Transpose::kYes;
      calls_.push_back({transpose_a, transpose_b, ta ? a.cols() : a.rows(), tb ? b.rows() : b.cols(),
                        ta ? a.rows() : a.cols(), a.cols(), b.cols(), alpha, beta});
    }
    CudaBackend::gemm_impl(transpose_a, transpose_b, alpha, a, b, beta, c);
  }

 private:
  bool recording_ = false;
  std::vector<GemmCall> calls_;
};

}  // namespace sluice::kernels
