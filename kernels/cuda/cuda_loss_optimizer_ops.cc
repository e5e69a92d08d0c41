// CudaBackend's losses and optimizer updates (operands checked by Backend), kernels in loss.cu and optimizer.cu.
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_launch.h"

namespace sluice::kernels {
namespace {

// (1 - beta1^step, 1 - beta2^step), computed exactly as the CPU path computes them: double pow, rounded to float.
using BiasCorrections = std::pair<float, float>;
BiasCorrections bias_corrections(const AdamWHyper& hyper, int64_t step) {
  const double t = static_cast<double>(step);
  return {static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta1), t)),
          static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta2), t))};
}

}  // namespace

double CudaBackend::mse_impl(const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad) {
  return cuda_launch::mse(pred.data(), target.data(), grad_scale, grad.data(), pred.size(), stream_);
}

double CudaBackend::softmax_cross_entropy_impl(const Tensor& logits, const Tensor& target, float grad_scale,
                                               Tensor& grad) {
  return cuda_launch::softmax_cross_entropy(logits.data(), target.data(), grad_scale, grad.data(), logits.rows(),
                                            logits.cols(), stream_);
}

void CudaBackend::sgd_update_impl(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param) {
  cuda_launch::sgd_update(hyper, grad.data(), velocity.data(), param.data(), param.size(), stream_);
}

void CudaBackend::adamw_update_impl(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg,
                                    Tensor& exp_avg_sq, Tensor& param) {
  const BiasCorrections corrections = bias_corrections(hyper, step);
  cuda_launch::adamw_update(hyper, corrections.first, corrections.second, grad.data(), exp_avg.data(),
                            exp_avg_sq.data(), param.data(), param.size(), stream_);
}

void CudaBackend::sgd_update_many_impl(const SgdHyper& hyper, const std::vector<SgdSlot>& slots) {
  std::vector<cuda_launch::SgdTensor> tensors;
  tensors.reserve(slots.size());
  for (const SgdSlot& slot : slots) {
    tensors.push_back({slot.grad->data(), slot.velocity->data(), slot.param->data(), slot.param->size()});
  }
  cuda_launch::sgd_update_many(hyper, tensors, stream_);
}

void CudaBackend::adamw_update_many_impl(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots) {
  std::vector<cuda_launch::AdamWTensor> tensors;
  tensors.reserve(slots.size());
  for (const AdamWSlot& slot : slots) {
    tensors.push_back({slot.grad->data(), slot.exp_avg->data(), slot.exp_avg_sq->data(), slot.param->data(),
                       slot.param->size()});
  }
  const BiasCorrections corrections = bias_corrections(hyper, step);
  cuda_launch::adamw_update_many(hyper, corrections.first, corrections.second, tensors, stream_);
}

}  // namespace sluice::kernels
