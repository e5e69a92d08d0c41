// LayerNorm over the feature axis (each row normalised on its own), by the vectorized row kernels of
// kernels/cpu/layernorm_rows.h: row statistics in double, summed in an order fixed by the row width alone, so a
// row's bits do not depend on the ISA chosen at run time nor on the rows (micro-batch) around it.
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/layernorm_rows.h"

namespace sluice::kernels {

void CpuBackend::layernorm_forward_impl(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                        Tensor& mean, Tensor& rstd) {
  layernorm_rows::forward(layernorm_rows::best(), x.rows(), x.cols(), x.data(), gamma.data(), beta.data(), eps,
                          y.data(), mean.data(), rstd.data());
}

void CpuBackend::layernorm_backward_input_impl(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                               const Tensor& mean, const Tensor& rstd, Tensor& dx) {
  layernorm_rows::backward_input(layernorm_rows::best(), x.rows(), x.cols(), dy.data(), x.data(), gamma.data(),
                                 mean.data(), rstd.data(), dx.data());
}

void CpuBackend::layernorm_accumulate_param_grads_impl(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                                       const Tensor& rstd, Tensor& gamma_grad, Tensor& beta_grad) {
  layernorm_rows::accumulate_param_grads(layernorm_rows::best(), x.rows(), x.cols(), dy.data(), x.data(), mean.data(),
                                         rstd.data(), gamma_grad.data(), beta_grad.data());
}

}  // namespace sluice::kernels
