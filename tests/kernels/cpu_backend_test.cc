// The CPU backend against independent references: naive loops written here, closed-form values worked out by
// hand, and finite differences of the backend's own forward ops.
#include "kernels/cpu/cpu_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/layernorm_rows.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

// Reference c = alpha * op(a) op(b) + beta * c in double.
std::vector<double> reference_gemm(bool ta, bool tb, double alpha, const Tensor& a, const Tensor& b, double beta,
                                   const Tensor& c) {
  const int64_t m = c.rows(), n = c.cols(), k = ta ? a.rows() : a.cols();
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = ta ? a.at(p, i) : a.at(i, p);
        const double bv = tb ? b.at(j, p) : b.at(p, j);
        sum += av * bv;
      }
      out[static_cast<size_t>(i * n + j)] = alpha * sum + beta * c.at(i, j);
    }
  }
  return out;
}

TEST(CpuBackendGemm, MatchesReferenceForEveryTransposeCombination) {
  Backend& backend = cpu_backend();
  const int64_t m = 5, n = 4, k = 7;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Tensor a = ta ? random_tensor(k, m, 1) : random_tensor(m, k, 1);
      Tensor b = tb ? random_tensor(n, k, 2) : random_tensor(k, n, 2);
      Tensor c = random_tensor(m, n, 3);
      const std::vector<double> expected = reference_gemm(ta, tb, 0.5, a, b, 1.0, c);
      backend.gemm(ta ? Transpose::kYes : Transpose::kNo, tb ? Transpose::kYes : Transpose::kNo, 0.5f, a, b, 1.0f, c);
      for (int64_t i = 0; i < c.size(); ++i) {
        EXPECT_NEAR(c.data()[i], expected[static_cast<size_t>(i)], 1e-5) << "ta=" << ta << " tb=" << tb << " i=" << i;
      }
    }
  }
}

TEST(CpuBackendGemm, ShapeMismatchNamesTheOperandAndShapes) {
  Tensor a = Tensor::host(2, 3), b = Tensor::host(4, 5), c = Tensor::host(2, 5);
  try {
    cpu_backend().gemm(Transpose::kNo, Transpose::kNo, 1.0f, a, b, 0.0f, c);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("[4][5]"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("[3][5]"), std::string::npos) << error.what();
  }
}

TEST(CpuBackendBias, AddsRowVectorAndSumsColumns) {
  Backend& backend = cpu_backend();
  Tensor y = Tensor::host_from(2, 3, {1, 2, 3, 4, 5, 6});
  Tensor bias = Tensor::host_from(1, 3, {10, 20, 30});
  backend.add_bias(bias, y);
  EXPECT_EQ(y.to_vector(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  Tensor grad = Tensor::host_from(1, 3, {1, 1, 1});
  backend.accumulate_bias_grad(Tensor::host_from(2, 3, {1, 2, 3, 4, 5, 6}), grad);
  EXPECT_EQ(grad.to_vector(), (std::vector<float>{6, 8, 10}));  // 1 + column sums: accumulates
}

TEST(CpuBackendActivation, ForwardValuesMatchDefinitions) {
  Backend& backend = cpu_backend();
  Tensor x = Tensor::host_from(1, 4, {-2.0f, -0.5f, 0.5f, 1.5f});
  for (Activation activation : {Activation::kRelu, Activation::kGelu, Activation::kTanh}) {
    Tensor y = Tensor::host(1, 4);
    backend.activation_forward(activation, x, y);
    for (int i = 0; i < 4; ++i) {
      const double v = x.data()[i];
      double expected = 0.0;
      if (activation == Activation::kRelu) expected = v > 0 ? v : 0;
      if (activation == Activation::kTanh) expected = std::tanh(v);
      if (activation == Activation::kGelu) {
        expected = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      }
      EXPECT_NEAR(y.data()[i], expected, 1e-6) << activation_name(activation) << " at " << v;
    }
  }
}

// The fused op must be indistinguishable from the two it replaces: layers switch between them freely.
TEST(CpuBackendActivation, BiasActivationForwardEqualsAddBiasThenActivationBitForBit) {
  Backend& backend = cpu_backend();
  const Tensor bias = random_tensor(1, 37, 3);
  for (Activation activation : {Activation::kRelu, Activation::kGelu, Activation::kTanh}) {
    Tensor x = random_tensor(5, 37, 4);
    backend.scale(3.0f, x);  // into tanh's and GELU's curved range
    Tensor separate_pre = x;
    backend.add_bias(bias, separate_pre);
    Tensor separate_y = Tensor::host(5, 37);
    backend.activation_forward(activation, separate_pre, separate_y);
    Tensor fused_pre = x;
    Tensor fused_y = Tensor::host(5, 37);
    backend.bias_activation_forward(activation, bias, fused_pre, fused_y);
    EXPECT_EQ(fused_pre.to_vector(), separate_pre.to_vector()) << activation_name(activation);
    EXPECT_EQ(fused_y.to_vector(), separate_y.to_vector()) << activation_name(activation);
    EXPECT_NE(fused_y.to_vector(), x.to_vector()) << activation_name(activation);  // something happened
  }
}

TEST(CpuBackendActivation, BiasActivationForwardNamesTheMisshapedOperand) {
  Backend& backend = cpu_backend();
  Tensor pre = Tensor::host(2, 3);
  Tensor y = Tensor::host(2, 3);
  const Tensor wrong_bias = Tensor::host(1, 4);
  try {
    backend.bias_activation_forward(Activation::kGelu, wrong_bias, pre, y);
    FAIL() << "a [1][4] bias for 3 columns was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("bias_activation_forward"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("bias"), std::string::npos) << error.what();
  }
  Tensor wrong_y = Tensor::host(3, 2);
  EXPECT_THROW(backend.bias_activation_forward(Activation::kGelu, Tensor::host(1, 3), pre, wrong_y), Error);
}

TEST(CpuBackendActivation, BackwardMatchesFiniteDifferences) {
  Backend& backend = cpu_backend();
  Tensor x = Tensor::host_from(1, 4, {-1.3f, -0.4f, 0.3f, 1.1f});  // away from ReLU's kink
  Tensor dy = Tensor::host_from(1, 4, {1, 1, 1, 1});
  const float h = 1e-3f;
  for (Activation activation : {Activation::kRelu, Activation::kGelu, Activation::kTanh}) {
    Tensor y = Tensor::host(1, 4);
    backend.activation_forward(activation, x, y);
    Tensor dx = Tensor::host(1, 4);
    backend.activation_backward(activation, activation_backward_uses_input(activation) ? x : y, dy, dx);
    for (int i = 0; i < 4; ++i) {
      Tensor plus = x, minus = x, y_plus = Tensor::host(1, 4), y_minus = Tensor::host(1, 4);
      plus.data()[i] += h;
      minus.data()[i] -= h;
      backend.activation_forward(activation, plus, y_plus);
      backend.activation_forward(activation, minus, y_minus);
      const double numeric = (static_cast<double>(y_plus.data()[i]) - y_minus.data()[i]) / (2.0 * h);
      EXPECT_NEAR(dx.data()[i], numeric, 2e-3) << activation_name(activation) << " element " << i;
    }
  }
}

TEST(CpuBackendLayerNorm, NormalisesEachRowThenAppliesGammaBeta) {
  Backend& backend = cpu_backend();
  Tensor x = Tensor::host_from(2, 4, {1, 2, 3, 4, -1, 0, 0, 5});
  Tensor gamma = Tensor::host_from(1, 4, {1, 2, 1, 1});
  Tensor beta = Tensor::host_from(1, 4, {0, 0, 0, 3});
  Tensor y = Tensor::host(2, 4), mean = Tensor::host(2, 1), rstd = Tensor::host(2, 1);
  backend.layernorm_forward(x, gamma, beta, 1e-5f, y, mean, rstd);
  // Row 0: mean 2.5, variance 1.25.
  EXPECT_FLOAT_EQ(mean.data()[0], 2.5f);
  EXPECT_NEAR(rstd.data()[0], 1.0 / std::sqrt(1.25 + 1e-5), 1e-6);
  EXPECT_NEAR(y.at(0, 0), -1.5 / std::sqrt(1.25 + 1e-5), 1e-5);
  EXPECT_NEAR(y.at(0, 1), 2 * -0.5 / std::sqrt(1.25 + 1e-5), 1e-5);
  EXPECT_NEAR(y.at(0, 3), 1.5 / std::sqrt(1.25 + 1e-5) + 3, 1e-5);
  EXPECT_FLOAT_EQ(mean.data()[1], 1.0f);
}

// LayerNorm's row kernels (kernels/cpu/layernorm_rows.h) on both paths against a double-precision reference, on
// widths that leave a partial sixteen-lane step (1, 3, 17, 257) and whole ones (16, 256), and the two paths' bits
// equal (the summation order is fixed by the width, not by the ISA).
struct LayerNormRun {
  std::vector<float> y, mean, rstd, dx, gamma_grad, beta_grad;
};

LayerNormRun run_layernorm_rows(layernorm_rows::Lanes lanes, int64_t rows, int64_t cols, const Tensor& x,
                                const Tensor& gamma, const Tensor& beta, const Tensor& dy) {
  const size_t n = static_cast<size_t>(rows * cols), c = static_cast<size_t>(cols);
  LayerNormRun run{std::vector<float>(n), std::vector<float>(rows), std::vector<float>(rows), std::vector<float>(n),
                   std::vector<float>(c, 0.5f), std::vector<float>(c, -0.25f)};
  layernorm_rows::forward(lanes, rows, cols, x.data(), gamma.data(), beta.data(), 1e-5f, run.y.data(),
                          run.mean.data(), run.rstd.data());
  layernorm_rows::backward_input(lanes, rows, cols, dy.data(), x.data(), gamma.data(), run.mean.data(),
                                 run.rstd.data(), run.dx.data());
  layernorm_rows::accumulate_param_grads(lanes, rows, cols, dy.data(), x.data(), run.mean.data(), run.rstd.data(),
                                         run.gamma_grad.data(), run.beta_grad.data());
  return run;
}

// The double reference for `run`, row by row; the parameter gradients start from 0.5 and -0.25 as in the run.
void expect_layernorm_near_reference(const LayerNormRun& run, int64_t rows, int64_t cols, const Tensor& x,
                                     const Tensor& gamma, const Tensor& beta, const Tensor& dy) {
  std::vector<double> gamma_grad(static_cast<size_t>(cols), 0.5), beta_grad(static_cast<size_t>(cols), -0.25);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0, squares = 0.0, sum_g = 0.0, sum_g_xhat = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += x.at(r, c);
    const double mu = sum / cols;
    for (int64_t c = 0; c < cols; ++c) squares += (x.at(r, c) - mu) * (x.at(r, c) - mu);
    const double rstd = 1.0 / std::sqrt(squares / cols + 1e-5);
    EXPECT_NEAR(run.mean[r], mu, 1e-6 * (1.0 + std::fabs(mu))) << "width " << cols << " row " << r;
    EXPECT_NEAR(run.rstd[r], rstd, 2e-6 * rstd) << "width " << cols << " row " << r;
    for (int64_t c = 0; c < cols; ++c) {
      const double xhat = (x.at(r, c) - mu) * rstd, g = static_cast<double>(dy.at(r, c)) * gamma.data()[c];
      sum_g += g;
      sum_g_xhat += g * xhat;
      const double y = gamma.data()[c] * xhat + beta.data()[c];
      EXPECT_NEAR(run.y[static_cast<size_t>(r * cols + c)], y, 1e-5 * (1.0 + std::fabs(y))) << "width " << cols;
      gamma_grad[static_cast<size_t>(c)] += dy.at(r, c) * xhat;
      beta_grad[static_cast<size_t>(c)] += dy.at(r, c);
    }
    for (int64_t c = 0; c < cols; ++c) {
      const double xhat = (x.at(r, c) - mu) * rstd, g = static_cast<double>(dy.at(r, c)) * gamma.data()[c];
      const double dx = rstd * (g - sum_g / cols - xhat * sum_g_xhat / cols);
      EXPECT_NEAR(run.dx[static_cast<size_t>(r * cols + c)], dx, 1e-5 * rstd) << "width " << cols << " row " << r;
    }
  }
  for (int64_t c = 0; c < cols; ++c) {
    EXPECT_NEAR(run.gamma_grad[static_cast<size_t>(c)], gamma_grad[static_cast<size_t>(c)], 1e-5 * rows);
    EXPECT_NEAR(run.beta_grad[static_cast<size_t>(c)], beta_grad[static_cast<size_t>(c)], 1e-5 * rows);
  }
}

TEST(CpuBackendLayerNorm, BothRowPathsMatchADoubleReferenceAndEachOthersBits) {
  const int64_t rows = 7;
  for (int64_t cols : {1, 3, 16, 17, 256, 257}) {
    Tensor x = random_tensor(rows, cols, 11), gamma = random_tensor(1, cols, 12), beta = random_tensor(1, cols, 13);
    Tensor dy = random_tensor(rows, cols, 14);
    // An offset and a spread per row: the centred second pass must not lose the variance to the mean.
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) x.data()[r * cols + c] = 3.0f * r - 5.0f + x.at(r, c) * (0.5f + r);
    const LayerNormRun portable =
        run_layernorm_rows(layernorm_rows::Lanes::kPortable, rows, cols, x, gamma, beta, dy);
    expect_layernorm_near_reference(portable, rows, cols, x, gamma, beta, dy);
    if (layernorm_rows::best() != layernorm_rows::Lanes::kAvx512) continue;  // no AVX-512F here: portable only
    const LayerNormRun avx512 = run_layernorm_rows(layernorm_rows::Lanes::kAvx512, rows, cols, x, gamma, beta, dy);
    expect_layernorm_near_reference(avx512, rows, cols, x, gamma, beta, dy);
    EXPECT_EQ(avx512.y, portable.y) << "width " << cols;
    EXPECT_EQ(avx512.mean, portable.mean) << "width " << cols;
    EXPECT_EQ(avx512.rstd, portable.rstd) << "width " << cols;
    EXPECT_EQ(avx512.dx, portable.dx) << "width " << cols;
    EXPECT_EQ(avx512.gamma_grad, portable.gamma_grad) << "width " << cols;
    EXPECT_EQ(avx512.beta_grad, portable.beta_grad) << "width " << cols;
  }
}

// A row's results do not depend on the rows around it: one row alone gives its bits inside a batch.
TEST(CpuBackendLayerNorm, RowBitsDoNotDependOnTheBatch) {
  const int64_t rows = 5, cols = 257;
  Tensor x = random_tensor(rows, cols, 21), gamma = random_tensor(1, cols, 22), beta = random_tensor(1, cols, 23);
  Tensor y = Tensor::host(rows, cols), mean = Tensor::host(rows, 1), rstd = Tensor::host(rows, 1);
  cpu_backend().layernorm_forward(x, gamma, beta, 1e-5f, y, mean, rstd);
  Tensor one = Tensor::host(1, cols), y_one = Tensor::host(1, cols), mean_one = Tensor::host(1, 1);
  Tensor rstd_one = Tensor::host(1, 1);
  for (int64_t c = 0; c < cols; ++c) one.data()[c] = x.at(3, c);
  cpu_backend().layernorm_forward(one, gamma, beta, 1e-5f, y_one, mean_one, rstd_one);
  EXPECT_EQ(mean_one.data()[0], mean.data()[3]);
  EXPECT_EQ(rstd_one.data()[0], rstd.data()[3]);
  for (int64_t c = 0; c < cols; ++c) EXPECT_EQ(y_one.data()[c], y.at(3, c)) << "column " << c;
}

TEST(CpuBackendRng, StreamElementsDoNotDependOnHowTheyAreDrawn) {
  const RngStream stream = dropout_stream(7, 5, 40, 10);  // rows of 10 features, samples 40, 41, ...
  std::vector<float> whole(100), pieces(100);
  uniform_floats(stream, 0, 100, whole.data());
  uniform_floats(stream, 0, 37, pieces.data());
  uniform_floats(stream, 37, 63, pieces.data() + 37);
  EXPECT_EQ(whole, pieces);
  for (float value : whole) {
    EXPECT_GE(value, 0.0f);
    EXPECT_LT(value, 1.0f);
  }
  std::vector<float> other(100);
  uniform_floats(dropout_stream(7, 6, 40, 10), 0, 100, other.data());  // another layer
  EXPECT_NE(whole, other);
  uniform_floats(dropout_stream(8, 5, 40, 10), 0, 100, other.data());  // another seed
  EXPECT_NE(whole, other);
  uniform_floats(init_stream(7, 5, 0), 0, 100, other.data());
  EXPECT_NE(whole, other);
}

// Element (row r, feature f) of a dropout stream depends on (seed, layer, first_sample + r, f) only: the same sample
// gets the same uniforms in whichever micro-batch (first_sample) and at whichever row it arrives.
TEST(CpuBackendRng, DropoutStreamIsKeyedByGlobalSample) {
  std::vector<float> batch(10 * 7), single(7), wider(9);
  uniform_floats(dropout_stream(3, 2, 100, 7), 0, batch.size(), batch.data());
  for (int r = 0; r < 10; ++r) {
    uniform_floats(dropout_stream(3, 2, 100 + r, 7), 0, 7, single.data());
    EXPECT_EQ(single, std::vector<float>(batch.begin() + r * 7, batch.begin() + (r + 1) * 7)) << "row " << r;
  }
  // Features are drawn per sample: a wider row shares its first features' uniforms with a narrower one.
  uniform_floats(dropout_stream(3, 2, 104, 9), 0, 9, wider.data());
  EXPECT_EQ(std::vector<float>(wider.begin(), wider.begin() + 7),
            std::vector<float>(batch.begin() + 4 * 7, batch.begin() + 5 * 7));
  // Consecutive samples differ.
  EXPECT_NE(std::vector<float>(batch.begin(), batch.begin() + 7), std::vector<float>(batch.begin() + 7, batch.begin() + 14));
}

TEST(CpuBackendDropout, MaskIsReproducibleScaledAndDropsAboutP) {
  Backend& backend = cpu_backend();
  const float p = 0.3f;
  const int64_t n = 100000;
  Tensor x = Tensor::host(1, n);
  backend.fill(2.0f, x);
  Tensor y1 = Tensor::host(1, n), y2 = Tensor::host(1, n), y_other = Tensor::host(1, n);
  backend.dropout_forward(x, p, dropout_stream(1, 4, 0, n), y1);
  backend.dropout_forward(x, p, dropout_stream(1, 4, 0, n), y2);
  backend.dropout_forward(x, p, dropout_stream(1, 4, 1, n), y_other);  // another sample
  EXPECT_EQ(y1.to_vector(), y2.to_vector());
  EXPECT_NE(y1.to_vector(), y_other.to_vector());
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (y1.data()[i] == 0.0f) {
      ++dropped;
    } else {
      EXPECT_FLOAT_EQ(y1.data()[i], 2.0f / (1.0f - p));
    }
  }
  EXPECT_NEAR(static_cast<double>(dropped) / n, p, 0.01);

  Tensor dy = Tensor::host(1, n), dx = Tensor::host(1, n);
  backend.fill(1.0f, dy);
  backend.dropout_backward(dy, p, dropout_stream(1, 4, 0, n), dx);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(dx.data()[i] == 0.0f, y1.data()[i] == 0.0f) << i;
}

TEST(CpuBackendDropout, RejectsProbabilityOne) {
  Tensor x = Tensor::host(1, 4), y = Tensor::host(1, 4);
  EXPECT_THROW(cpu_backend().dropout_forward(x, 1.0f, dropout_stream(1, 0, 0, 4), y), Error);
}

TEST(CpuBackendDropout, RejectsAStreamOfAnotherRowWidth) {
  Tensor x = Tensor::host(2, 4), y = Tensor::host(2, 4);
  EXPECT_THROW(cpu_backend().dropout_forward(x, 0.5f, dropout_stream(1, 0, 0, 8), y), Error);
  EXPECT_THROW(cpu_backend().dropout_backward(x, 0.5f, dropout_stream(1, 0, 0, 2), y), Error);
}

TEST(CpuBackendElementwise, AddAxpyScaleCopySumOfSquares) {
  Backend& backend = cpu_backend();
  Tensor a = Tensor::host_from(1, 3, {1, 2, 3});
  Tensor b = Tensor::host_from(1, 3, {4, 5, 6});
  Tensor out = Tensor::host(1, 3);
  backend.add(a, b, out);
  EXPECT_EQ(out.to_vector(), (std::vector<float>{5, 7, 9}));
  backend.axpy(2.0f, a, out);
  EXPECT_EQ(out.to_vector(), (std::vector<float>{7, 11, 15}));
  backend.scale(0.5f, out);
  EXPECT_EQ(out.to_vector(), (std::vector<float>{3.5f, 5.5f, 7.5f}));
  backend.copy(a, out);
  EXPECT_EQ(out.to_vector(), a.to_vector());
  EXPECT_DOUBLE_EQ(backend.sum_of_squares(a), 14.0);
}

// sum_of_squares keeps eight partial sums: every element must land in one of them, the n % 8 tail included, and
// a non-finite element must show (the trainer's numeric check relies on it).
TEST(CpuBackendElementwise, SumOfSquaresCountsEveryElementAtEverySize) {
  Backend& backend = cpu_backend();
  for (int64_t size : {1, 7, 8, 9, 17, 1000, 1031}) {
    Tensor x = Tensor::host(1, size);
    double expected = 0.0;
    for (int64_t i = 0; i < size; ++i) {
      x.data()[i] = 0.25f * static_cast<float>(i % 13) - 1.0f;
      expected += static_cast<double>(x.data()[i]) * x.data()[i];
    }
    EXPECT_NEAR(backend.sum_of_squares(x), expected, 1e-12 * expected) << size << " elements";
    x.data()[size - 1] = std::numeric_limits<float>::infinity();
    EXPECT_FALSE(std::isfinite(backend.sum_of_squares(x))) << size << " elements, the last infinite";
  }
}

TEST(CpuBackendLoss, MseValueAndGradient) {
  Tensor pred = Tensor::host_from(1, 2, {1, 3}), target = Tensor::host_from(1, 2, {0, 5});
  Tensor grad = Tensor::host(1, 2);
  EXPECT_DOUBLE_EQ(cpu_backend().mse(pred, target, 0.5f, grad), 5.0);  // 1 + 4
  EXPECT_EQ(grad.to_vector(), (std::vector<float>{1.0f, -2.0f}));      // 0.5 * 2 * (y - t)
}

TEST(CpuBackendLoss, SoftmaxCrossEntropyOfKnownLogits) {
  // softmax(0, ln 3) = (1/4, 3/4); target class 0 -> loss ln 4; grad = softmax - target.
  Tensor logits = Tensor::host_from(1, 2, {0.0f, static_cast<float>(std::log(3.0))});
  Tensor target = Tensor::host_from(1, 2, {1, 0});
  Tensor grad = Tensor::host(1, 2);
  EXPECT_NEAR(cpu_backend().softmax_cross_entropy(logits, target, 1.0f, grad), std::log(4.0), 1e-6);
  EXPECT_NEAR(grad.data()[0], -0.75, 1e-6);
  EXPECT_NEAR(grad.data()[1], 0.75, 1e-6);
}

TEST(CpuBackendLoss, SoftmaxCrossEntropyStaysFiniteForHugeLogits) {
  Tensor logits = Tensor::host_from(1, 2, {1000.0f, 0.0f});
  Tensor target = Tensor::host_from(1, 2, {0, 1});
  Tensor grad = Tensor::host(1, 2);
  EXPECT_NEAR(cpu_backend().softmax_cross_entropy(logits, target, 1.0f, grad), 1000.0, 1e-3);
  EXPECT_NEAR(grad.data()[0], 1.0, 1e-6);
  EXPECT_NEAR(grad.data()[1], -1.0, 1e-6);
}

TEST(CpuBackendOptimizer, SgdMomentumByHand) {
  Tensor param = Tensor::host_from(1, 1, {1.0f}), grad = Tensor::host_from(1, 1, {0.5f}), velocity = Tensor::host(1, 1);
  SgdHyper hyper;
  hyper.lr = 0.1f;
  hyper.momentum = 0.9f;
  cpu_backend().sgd_update(hyper, grad, velocity, param);
  EXPECT_NEAR(param.data()[0], 0.95, 1e-6);  // v = 0.5
  cpu_backend().sgd_update(hyper, grad, velocity, param);
  EXPECT_NEAR(param.data()[0], 0.855, 1e-6);  // v = 0.9 * 0.5 + 0.5 = 0.95
}

TEST(CpuBackendOptimizer, AdamWFirstStepMovesByLrAndDecaysDecoupled) {
  // Step 1: m_hat = g, v_hat = g^2, so the Adam part is lr * sign(g); decay multiplies by 1 - lr * wd first.
  Tensor param = Tensor::host_from(1, 2, {1.0f, -2.0f}), grad = Tensor::host_from(1, 2, {0.2f, -3.0f});
  Tensor m = Tensor::host(1, 2), v = Tensor::host(1, 2);
  AdamWHyper hyper;
  hyper.lr = 0.01f;
  hyper.weight_decay = 0.1f;
  cpu_backend().adamw_update(hyper, 1, grad, m, v, param);
  EXPECT_NEAR(param.data()[0], 1.0 * 0.999 - 0.01, 1e-6);
  EXPECT_NEAR(param.data()[1], -2.0 * 0.999 + 0.01, 1e-6);
  EXPECT_NEAR(m.data()[1], -0.3, 1e-6);
  EXPECT_NEAR(v.data()[1], 0.009, 0.009 * 1e-4);  // (1 - 0.999f) is not exactly 1e-3 in fp32
  EXPECT_THROW(cpu_backend().adamw_update(hyper, 0, grad, m, v, param), Error);
}

}  // namespace
}  // namespace sluice::kernels
