// The CPU backend's vectorised SGD and AdamW updates against the plain scalar formulas written here (the code the
// kernels replaced), bit for bit: random values and edge values (zeros, denormals, huge, negative, inf), sizes
// that are and are not multiples of the vector width, several steps and hyper-parameter sets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

void reference_adamw(const AdamWHyper& hyper, int64_t step, const std::vector<float>& gr, std::vector<float>& m1,
                     std::vector<float>& m2, std::vector<float>& p) {
  const double t = static_cast<double>(step);
  const float bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta1), t));
  const float bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta2), t));
  const float decay = 1.0f - hyper.lr * hyper.weight_decay;
  for (size_t i = 0; i < p.size(); ++i) {
    const float g = gr[i];
    m1[i] = hyper.beta1 * m1[i] + (1.0f - hyper.beta1) * g;
    m2[i] = hyper.beta2 * m2[i] + (1.0f - hyper.beta2) * g * g;
    const float m_hat = m1[i] / bias_correction1;
    const float v_hat = m2[i] / bias_correction2;
    p[i] = p[i] * decay - hyper.lr * m_hat / (std::sqrt(v_hat) + hyper.eps);
  }
}

void reference_sgd(const SgdHyper& hyper, const std::vector<float>& gr, std::vector<float>& vel,
                   std::vector<float>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    const float g = gr[i] + hyper.weight_decay * p[i];
    vel[i] = hyper.momentum * vel[i] + g;
    p[i] -= hyper.lr * vel[i];
  }
}

// Random values in [-2, 2) with every 7th element replaced by an edge value.
std::vector<float> values(int64_t n, unsigned seed, bool non_negative) {
  const float edges[] = {0.0f, -0.0f, 1e-40f, -1e-40f, std::numeric_limits<float>::denorm_min(), 1e30f, -1e30f,
                         3e38f, 1e-20f, -7.5f, std::numeric_limits<float>::min()};
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float v = (i % 7 == 3) ? edges[(i / 7 + seed) % (sizeof(edges) / sizeof(edges[0]))] : uniform(generator);
    out[static_cast<size_t>(i)] = non_negative ? std::fabs(v) : v;
  }
  return out;
}

Tensor to_tensor(const std::vector<float>& v) {
  Tensor t = Tensor::host(1, static_cast<int64_t>(v.size()));
  std::memcpy(t.data(), v.data(), sizeof(float) * v.size());
  return t;
}

void expect_same_bits(const std::vector<float>& expected, const Tensor& actual, const char* what, int64_t n) {
  ASSERT_EQ(static_cast<int64_t>(expected.size()), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    uint32_t e, a;
    std::memcpy(&e, &expected[i], 4);
    std::memcpy(&a, &actual.data()[i], 4);
    ASSERT_EQ(e, a) << what << " n=" << n << " i=" << i << " expected " << expected[i] << " got "
                    << actual.data()[i];
  }
}

const int64_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 1000, 1027, 4099};

TEST(CpuOptimizerSimd, AdamWIsBitIdenticalToTheScalarFormula) {
  AdamWHyper hypers[3];
  hypers[1].lr = 0.01f, hypers[1].weight_decay = 0.1f, hypers[1].eps = 1e-6f;
  hypers[2].lr = 3e-4f, hypers[2].beta1 = 0.8f, hypers[2].beta2 = 0.95f, hypers[2].weight_decay = 0.01f;
  unsigned seed = 1;
  for (const AdamWHyper& hyper : hypers) {
    for (int64_t n : kSizes) {
      std::vector<float> m1 = values(n, seed++, false), m2 = values(n, seed++, true), p = values(n, seed++, false);
      Tensor m1_t = to_tensor(m1), m2_t = to_tensor(m2), p_t = to_tensor(p);
      for (int64_t step : {1, 2, 10, 1000}) {
        const std::vector<float> g = values(n, seed++, false);
        const Tensor g_t = to_tensor(g);
        reference_adamw(hyper, step, g, m1, m2, p);
        cpu_backend().adamw_update(hyper, step, g_t, m1_t, m2_t, p_t);
        expect_same_bits(m1, m1_t, "exp_avg", n);
        expect_same_bits(m2, m2_t, "exp_avg_sq", n);
        expect_same_bits(p, p_t, "param", n);
        expect_same_bits(g, g_t, "grad (must be left unchanged)", n);
      }
    }
  }
}

TEST(CpuOptimizerSimd, SgdIsBitIdenticalToTheScalarFormula) {
  SgdHyper hypers[3];
  hypers[1].lr = 0.1f, hypers[1].momentum = 0.9f;
  hypers[2].lr = 0.03f, hypers[2].momentum = 0.5f, hypers[2].weight_decay = 1e-4f;
  unsigned seed = 100;
  for (const SgdHyper& hyper : hypers) {
    for (int64_t n : kSizes) {
      std::vector<float> v = values(n, seed++, false), p = values(n, seed++, false);
      Tensor v_t = to_tensor(v), p_t = to_tensor(p);
      for (int step = 0; step < 3; ++step) {
        const std::vector<float> g = values(n, seed++, false);
        const Tensor g_t = to_tensor(g);
        reference_sgd(hyper, g, v, p);
        cpu_backend().sgd_update(hyper, g_t, v_t, p_t);
        expect_same_bits(v, v_t, "velocity", n);
        expect_same_bits(p, p_t, "param", n);
      }
    }
  }
}

}  // namespace
}  // namespace sluice::kernels
