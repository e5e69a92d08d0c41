// LayerNorm over rows of `cols` contiguous floats (the transformer's feature axis), forward, input gradient and
// parameter gradients, vectorized with a summation order that is fixed by the row width alone.
//
// Row statistics (sum of x, sum of (x - mean)^2, and the backward's sum of g and of g * xhat) are accumulated in
// double into 16 partial sums: element c goes to partial c % 16, in increasing c; the partials are then combined
// by a fixed tree, p[i] + p[i + 8], then + 4 apart, + 2 apart, + 1 apart (combine_partials). The AVX-512F path
// (two 8-lane double accumulators) and the portable path (sixteen scalar partials) perform the same IEEE operations
// in the same order, so both give the same bits on every machine: the result depends on neither the ISA chosen at
// run time nor the rows around it (pipelined = sequential whatever the micro-batch split). Element-wise parts are
// the scalar formulas lane by lane (the including target builds with -ffp-contract=off: no fused multiply-adds).
// The parameter gradients are summed over rows: they are vectorized across columns, so each column still receives
// its rows in row order.
#pragma once

#include <cstdint>

namespace sluice::kernels::layernorm_rows {

// Which code runs the rows: kAvx512 where the CPU has AVX-512F (best()), else kPortable. Exposed so that tests can
// run both and compare them on any machine that has AVX-512F.
enum class Lanes { kAvx512, kPortable };

// kAvx512 where this build and CPU support it (fixed per process), else kPortable.
Lanes best();

// y = gamma * (x - mean) * rstd + beta per row; mean[r], rstd[r] = 1 / sqrt(var + eps) (biased variance).
void forward(Lanes lanes, int64_t rows, int64_t cols, const float* x, const float* gamma, const float* beta, float eps,
             float* y, float* mean, float* rstd);

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma, xhat = (x - mean) * rstd.
void backward_input(Lanes lanes, int64_t rows, int64_t cols, const float* dy, const float* x, const float* gamma,
                    const float* mean, const float* rstd, float* dx);

// gamma_grad[c] += sum over rows of dy * xhat, beta_grad[c] += sum over rows of dy, rows in order.
void accumulate_param_grads(Lanes lanes, int64_t rows, int64_t cols, const float* dy, const float* x, const float* mean,
                            const float* rstd, float* gamma_grad, float* beta_grad);

}  // namespace sluice::kernels::layernorm_rows
