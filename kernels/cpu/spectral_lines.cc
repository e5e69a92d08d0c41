#include "kernels/cpu/spectral_lines.h"

#include <algorithm>

namespace sluice::kernels {
namespace {

int64_t longest(const SpectralGeometry& g) {
  int64_t n = 1;
  for (int64_t e : g.extents) n = std::max(n, e);
  return n;
}

// Where kept position r of a dimension of extent n with m modes lies in the full spectrum: the first m positions are
// the modes 0..m−1, the next m the modes −m..−1 (n − m .. n − 1).
int64_t spectrum_index(int64_t r, int64_t m, int64_t n) { return r < m ? r : n - 2 * m + r; }

std::complex<float> value(const fftwf_complex& c) { return {c[0], c[1]}; }

}  // namespace

SpectralLines::SpectralLines(const SpectralGeometry& geometry)
    : g_(geometry), scratch_(longest(geometry)),
      a_(static_cast<size_t>(geometry.points())), b_(static_cast<size_t>(geometry.points())) {}

void SpectralLines::forward(const float* field, std::complex<float>* kept) {
  const size_t k = g_.dims();
  const int64_t n_last = g_.extents[k - 1], m_last = g_.modes[k - 1];
  const int64_t lines = g_.points() / n_last;
  const LinePlans& last = line_plans(n_last);
  // The last dimension: [n1..n(k−1), n_last] reals -> a_ [n1..n(k−1), m_last].
  for (int64_t l = 0; l < lines; ++l) {
    std::copy(field + l * n_last, field + (l + 1) * n_last, scratch_.real());
    fftwf_execute_dft_r2c(last.r2c, scratch_.real(), scratch_.out());
    for (int64_t j = 0; j < m_last; ++j) a_[static_cast<size_t>(l * m_last + j)] = value(scratch_.out()[j]);
  }
  // Each earlier dimension d, from the last but one to the first: [.., n_d, inner] -> [.., 2·m_d, inner].
  int64_t inner = m_last, outer = lines;
  for (size_t d = k - 1; d-- > 0;) {
    const int64_t n = g_.extents[d], m = g_.modes[d], kept_d = 2 * m;
    outer /= n;
    const LinePlans& plans = line_plans(n);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t t = 0; t < n; ++t) {
          const std::complex<float> v = a_[static_cast<size_t>((o * n + t) * inner + i)];
          scratch_.in()[t][0] = v.real();
          scratch_.in()[t][1] = v.imag();
        }
        fftwf_execute_dft(plans.forward, scratch_.in(), scratch_.out());
        for (int64_t r = 0; r < kept_d; ++r) {
          b_[static_cast<size_t>((o * kept_d + r) * inner + i)] = value(scratch_.out()[spectrum_index(r, m, n)]);
        }
      }
    }
    inner *= kept_d;
    std::swap(a_, b_);
  }
  std::copy(a_.begin(), a_.begin() + g_.kept_modes(), kept);
}

void SpectralLines::inverse(const std::complex<float>* kept, float scale, float* field) {
  const size_t k = g_.dims();
  const int64_t n_last = g_.extents[k - 1], m_last = g_.modes[k - 1];
  std::copy(kept, kept + g_.kept_modes(), a_.begin());
  // Each earlier dimension d, from the first: [n1..n(d−1), 2·m_d, inner] -> [n1..n(d−1), n_d, inner].
  int64_t outer = 1, inner = g_.kept_modes();
  for (size_t d = 0; d + 1 < k; ++d) {
    const int64_t n = g_.extents[d], m = g_.modes[d], kept_d = 2 * m;
    inner /= kept_d;
    const LinePlans& plans = line_plans(n);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        std::fill(&scratch_.in()[0][0], &scratch_.in()[0][0] + 2 * n, 0.0f);
        for (int64_t r = 0; r < kept_d; ++r) {
          const std::complex<float> v = a_[static_cast<size_t>((o * kept_d + r) * inner + i)];
          scratch_.in()[spectrum_index(r, m, n)][0] = v.real();
          scratch_.in()[spectrum_index(r, m, n)][1] = v.imag();
        }
        fftwf_execute_dft(plans.backward, scratch_.in(), scratch_.out());
        for (int64_t t = 0; t < n; ++t) b_[static_cast<size_t>((o * n + t) * inner + i)] = value(scratch_.out()[t]);
      }
    }
    outer *= n;
    std::swap(a_, b_);
  }
  // The last dimension: [n1..n(k−1), m_last] -> [n1..n(k−1), n_last] reals.
  const int64_t half = n_last / 2 + 1;
  const LinePlans& last = line_plans(n_last);
  for (int64_t l = 0; l < outer; ++l) {
    std::fill(&scratch_.in()[0][0], &scratch_.in()[0][0] + 2 * half, 0.0f);
    for (int64_t j = 0; j < m_last; ++j) {
      scratch_.in()[j][0] = a_[static_cast<size_t>(l * m_last + j)].real();
      scratch_.in()[j][1] = a_[static_cast<size_t>(l * m_last + j)].imag();
    }
    fftwf_execute_dft_c2r(last.c2r, scratch_.in(), scratch_.real());
    for (int64_t t = 0; t < n_last; ++t) field[l * n_last + t] = scratch_.real()[t] * scale;
  }
}

}  // namespace sluice::kernels
