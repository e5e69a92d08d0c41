// CpuBackend's field ops: convolutions through oneDNN one sample per call (kernels/cpu/onednn_conv.h says why),
// shared out over the rank's threads; explicit periodic and reflect padding as index tables; column blocks.
#include <algorithm>
#include <array>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_conv.h"
#include "kernels/cpu/parallel_blocks.h"

namespace sluice::kernels {

void CpuBackend::conv_forward_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& weight,
                                   const Tensor* bias, Tensor& y) {
  const BlasHeldAtOneThread team;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  const float* b = bias != nullptr ? bias->data() : nullptr;
  const double work = static_cast<double>(out) * static_cast<double>(geometry.weight_cols());
  run_blocks(x.rows(), threads_for(team.team_threads(), x.rows(), work), [&](int64_t n) {
    onednn_conv_forward(geometry, x.data() + n * in, weight.data(), b, y.data() + n * out);
  });
}

void CpuBackend::conv_backward_data_impl(const ConvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                         Tensor& dx) {
  const BlasHeldAtOneThread team;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  const double work = static_cast<double>(out) * static_cast<double>(geometry.weight_cols());
  run_blocks(dy.rows(), threads_for(team.team_threads(), dy.rows(), work), [&](int64_t n) {
    onednn_conv_backward_data(geometry, dy.data() + n * out, weight.data(), dx.data() + n * in);
  });
}

// One partial per sample, added in sample order: the bits do not depend on which thread computed which sample.
void CpuBackend::conv_accumulate_param_grads_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                                  Tensor& weight_grad, Tensor* bias_grad) {
  const int64_t samples = x.rows();
  if (samples == 0) return;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  const int64_t weights = weight_grad.size(), biases = bias_grad != nullptr ? bias_grad->size() : 0;
  const int64_t stride = weights + biases;
  std::vector<float> partials(static_cast<size_t>(samples * stride));
  const BlasHeldAtOneThread team;
  const double work = static_cast<double>(out) * static_cast<double>(geometry.weight_cols());
  run_blocks(samples, threads_for(team.team_threads(), samples, work), [&](int64_t n) {
    float* partial = partials.data() + n * stride;
    onednn_conv_backward_weights(geometry, x.data() + n * in, dy.data() + n * out, partial,
                                 bias_grad != nullptr ? partial + weights : nullptr);
  });
  for (int64_t n = 0; n < samples; ++n) {
    const float* partial = partials.data() + n * stride;
    float* w = weight_grad.data();
    for (int64_t i = 0; i < weights; ++i) w[i] += partial[i];
    if (bias_grad != nullptr) {
      float* b = bias_grad->data();
      for (int64_t i = 0; i < biases; ++i) b[i] += partial[weights + i];
    }
  }
}

namespace {

// Up to three spatial dimensions, each given as the source index of every padded position; missing leading
// dimensions are extent 1.
struct PadTables {
  std::array<std::vector<int64_t>, 3> source;
  std::array<int64_t, 3> in{1, 1, 1};
};

int64_t source_index(PadMode mode, int64_t position, int64_t n) {
  if (mode == PadMode::kPeriodic) return ((position % n) + n) % n;
  if (position < 0) return -position;
  if (position >= n) return 2 * (n - 1) - position;
  return position;
}

PadTables tables_of(const PadGeometry& g) {
  PadTables t;
  const size_t lead = 3 - g.in.size();
  for (size_t d = 0; d < 3; ++d) {
    if (d < lead) {
      t.source[d] = {0};
      continue;
    }
    const size_t k = d - lead;
    t.in[d] = g.in[k];
    for (int64_t o = 0; o < g.in[k] + g.low[k] + g.high[k]; ++o) {
      t.source[d].push_back(source_index(g.mode, o - g.low[k], g.in[k]));
    }
  }
  return t;
}

// Calls visit(source offset, padded offset) for every padded element of one sample, in padded C order.
template <typename Visit>
void for_each_padded(const PadTables& t, int64_t channels, Visit&& visit) {
  int64_t o = 0;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t s0 : t.source[0]) {
      for (int64_t s1 : t.source[1]) {
        const int64_t row = ((c * t.in[0] + s0) * t.in[1] + s1) * t.in[2];
        for (int64_t s2 : t.source[2]) visit(row + s2, o++);
      }
    }
  }
}

}  // namespace

void CpuBackend::copy_columns_impl(const Tensor& source, int64_t source_col, Tensor& destination,
                                   int64_t destination_col, int64_t count, bool add) {
  for (int64_t r = 0; r < source.rows(); ++r) {
    const float* from = source.data() + r * source.cols() + source_col;
    float* to = destination.data() + r * destination.cols() + destination_col;
    if (add) {
      for (int64_t j = 0; j < count; ++j) to[j] += from[j];
    } else {
      std::copy(from, from + count, to);
    }
  }
}

void CpuBackend::pad_forward_impl(const PadGeometry& geometry, const Tensor& x, Tensor& y) {
  const PadTables tables = tables_of(geometry);
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  for (int64_t n = 0; n < x.rows(); ++n) {
    const float* source = x.data() + n * in;
    float* padded = y.data() + n * out;
    for_each_padded(tables, geometry.channels, [&](int64_t s, int64_t o) { padded[o] = source[s]; });
  }
}

void CpuBackend::pad_backward_impl(const PadGeometry& geometry, const Tensor& dy, Tensor& dx) {
  const PadTables tables = tables_of(geometry);
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  fill_impl(0.0f, dx);
  for (int64_t n = 0; n < dy.rows(); ++n) {
    const float* padded = dy.data() + n * out;
    float* source = dx.data() + n * in;
    for_each_padded(tables, geometry.channels, [&](int64_t s, int64_t o) { source[s] += padded[o]; });
  }
}

}  // namespace sluice::kernels
