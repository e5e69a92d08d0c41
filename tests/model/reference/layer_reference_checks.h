// The checks the layer reference tests share: a case of a reference file (layer_reference_file.h) parsed from its
// YAML entry as a config would be, built on the CPU backend with PyTorch's parameters and input, compared with
// PyTorch's output, input gradient and parameter gradients to 1e-5 (relative to the largest reference value), and
// its fused backward against central finite differences of our own forward. Header-only; gtest.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/model/builder.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/reference/layer_reference_file.h"

namespace sluice::model::reference_checks {

using kernels::Tensor;
using sluice::testing::LayerReferenceCase;

inline std::string type_of(const LayerReferenceCase& c) {
  const size_t start = c.layer_yaml.find("type:") + 5;
  const size_t end = c.layer_yaml.find_first_of(",}", start);
  std::string type = c.layer_yaml.substr(start, end - start);
  type.erase(std::remove(type.begin(), type.end(), ' '), type.end());
  return type;
}

inline config::Config config_of(const LayerReferenceCase& c) {
  std::string shape;
  for (int64_t extent : c.input_shape) shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
  return config::parse_config("model:\n  inputs: [" + shape + "]\n  layers:\n    - " + c.layer_yaml +
                              "\nloss: mse\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: " +
                              std::to_string(c.batch) + "}\n");
}

inline Tensor tensor_of(const LayerReferenceCase& c, const std::string& name, int64_t rows) {
  const std::vector<float>& values = c.tensors.at(name);
  return Tensor::host_from(rows, static_cast<int64_t>(values.size()) / rows, values);
}

// |ours - reference| <= 1e-5 · max(1, max |reference|) element by element.
inline void expect_close(const Tensor& ours, const std::vector<float>& reference, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(ours.size()), reference.size()) << what;
  float scale = 1.0f;
  for (float v : reference) scale = std::max(scale, std::fabs(v));
  int reported = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const float difference = std::fabs(ours.data()[i] - reference[i]);
    if (difference > 1e-5f * scale && reported++ < 3) {
      ADD_FAILURE() << what << " element " << i << ": ours " << ours.data()[i] << ", PyTorch " << reference[i];
    }
  }
}

struct Built {
  std::unique_ptr<Layer> layer;
  Tensor x, dy;
};

inline Built build(const LayerReferenceCase& c) {
  const config::Config cfg = config_of(c);
  auto layers = build_layers(cfg.model, kernels::cpu_backend());
  EXPECT_EQ(layers.size(), 1u);
  Built built{std::move(layers[0]), tensor_of(c, "x", c.batch), tensor_of(c, "dy", c.batch)};
  built.layer->set_global_index(0);
  for (Parameter* p : built.layer->parameters()) {
    const std::vector<float>& values = c.tensors.at(p->name);
    EXPECT_EQ(static_cast<size_t>(p->value.size()), values.size()) << c.name << " " << p->name;
    std::copy(values.begin(), values.end(), p->value.data());
  }
  return built;
}

// Split backward (I then W), as the zero-bubble schedules run it.
inline void expect_matches_pytorch(const LayerReferenceCase& c) {
  SCOPED_TRACE(c.name + ": " + c.layer_yaml);
  Built b = build(c);
  ForwardContext context;
  LayerSaved saved;
  const Tensor y = b.layer->forward(b.x, context, saved);
  expect_close(y, c.tensors.at("y"), "y");
  const Tensor dx = b.layer->backward_input(b.dy, saved);
  b.layer->backward_weight(b.dy, saved);
  expect_close(dx, c.tensors.at("dx"), "dx");
  for (Parameter* p : b.layer->parameters()) expect_close(p->grad, c.tensors.at(p->name + "_grad"), p->name + "_grad");
}

// The element indices a finite-difference check visits: all of [0, size), or `max_elements` of them spread evenly.
inline std::vector<int64_t> checked_elements(int64_t size, int64_t max_elements) {
  std::vector<int64_t> indices;
  const int64_t count = max_elements > 0 && max_elements < size ? max_elements : size;
  for (int64_t k = 0; k < count; ++k) indices.push_back(count == size ? k : k * (size - 1) / (count - 1));
  return indices;
}

// L = sum(y · dy) in double from our fp32 forward; its central differences against our backward, for the input
// and every parameter element.
inline double objective(Layer& layer, const Tensor& x, const Tensor& dy) {
  ForwardContext context;
  LayerSaved saved;
  const Tensor y = layer.forward(x, context, saved);
  double sum = 0.0;
  for (int64_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y.data()[i]) * dy.data()[i];
  return sum;
}

inline double central_difference(Layer& layer, float* value, const Tensor& x, const Tensor& dy, float step) {
  const float original = *value;
  *value = original + step;
  const double plus = objective(layer, x, dy);
  *value = original - step;
  const double minus = objective(layer, x, dy);
  *value = original;
  return (plus - minus) / (2.0 * step);
}

// Richardson's extrapolation of two central differences (steps h and h/2) cancels their h² error: the
// normalizations over a few channels curve strongly enough for a plain central difference at h = 1e-2 to miss by
// more than the tolerance.
inline double central_difference(Layer& layer, float* value, const Tensor& x, const Tensor& dy) {
  constexpr float kStep = 1e-2f;
  const double coarse = central_difference(layer, value, x, dy, kStep);
  const double fine = central_difference(layer, value, x, dy, kStep / 2);
  return (4.0 * fine - coarse) / 3.0;
}

// Every element of x and of each parameter, or, with `max_elements` > 0, at most that many of each, evenly spaced
// (the first and the last included).
inline void expect_matches_finite_differences(const LayerReferenceCase& c, int64_t max_elements = 0) {
  SCOPED_TRACE(c.name + ": " + c.layer_yaml);
  Built b = build(c);
  ForwardContext context;
  LayerSaved saved;
  b.layer->forward(b.x, context, saved);
  const Tensor dx = b.layer->backward(b.dy, saved);  // fused B
  Tensor x = b.x;
  for (int64_t i : checked_elements(x.size(), max_elements)) {
    const double numeric = central_difference(*b.layer, x.data() + i, x, b.dy);
    EXPECT_NEAR(dx.data()[i], numeric, 2e-3 + 2e-3 * std::fabs(numeric)) << "x element " << i;
  }
  for (Parameter* p : b.layer->parameters()) {
    for (int64_t i : checked_elements(p->value.size(), max_elements)) {
      const double numeric = central_difference(*b.layer, p->value.data() + i, b.x, b.dy);
      EXPECT_NEAR(p->grad.data()[i], numeric, 2e-3 + 2e-3 * std::fabs(numeric)) << p->name << " element " << i;
    }
  }
}

}  // namespace sluice::model::reference_checks
