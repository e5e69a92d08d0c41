// Skip connections (name / concat / add, core/model/skip_layer.h): a small U-Net-like model with one layer read by
// two later layers, against PyTorch's forward and gradients of the same model (skip_references.txt, written once by
// reference/make_skip_references.py); the boundary widths that carry the skips; and the config's refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/model/builder.h"
#include "core/model/model_shape.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/reference/layer_reference_file.h"

namespace sluice::model {
namespace {

using kernels::Tensor;

const char* const kTail = "loss: mse\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: 3}\n";

config::Config config_of(const std::string& inputs, const std::string& layer_lines) {
  std::string layers;
  std::istringstream lines(layer_lines);
  for (std::string line; std::getline(lines, line);) layers += "    - " + line + "\n";
  return config::parse_config("model:\n  inputs: " + inputs + "\n  layers:\n" + layers + kTail);
}

void expect_close(const Tensor& ours, const std::vector<float>& reference, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(ours.size()), reference.size()) << what;
  float scale = 1.0f;
  for (float v : reference) scale = std::max(scale, std::fabs(v));
  int reported = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    if (std::fabs(ours.data()[i] - reference[i]) > 1e-5f * scale && reported++ < 3) {
      ADD_FAILURE() << what << " element " << i << ": ours " << ours.data()[i] << ", PyTorch " << reference[i];
    }
  }
}

TEST(SkipConnections, AUNetWithSkipsMatchesPyTorch) {
  const auto cases = sluice::testing::read_layer_references("tests/model/reference/skip_references.txt");
  ASSERT_EQ(cases.size(), 1u);
  const auto& c = cases[0];
  std::string shape;
  for (int64_t e : c.input_shape) shape += (shape.empty() ? "" : ", ") + std::to_string(e);
  const config::Config cfg = config_of("[" + shape + "]", c.layer_yaml);
  auto layers = build_layers(cfg.model, kernels::cpu_backend());
  ASSERT_EQ(layers.size(), 11u);
  int set = 0;
  for (auto& layer : layers) {
    for (Parameter* p : layer->parameters()) {
      const std::vector<float>& values = c.tensors.at(p->qualified_name());
      ASSERT_EQ(static_cast<size_t>(p->value.size()), values.size()) << p->qualified_name();
      std::copy(values.begin(), values.end(), p->value.data());
      ++set;
    }
  }
  EXPECT_EQ(set, 10);
  std::vector<LayerSaved> saved(layers.size());
  Tensor h = Tensor::host_from(c.batch, static_cast<int64_t>(c.tensors.at("x").size()) / c.batch, c.tensors.at("x"));
  for (size_t i = 0; i < layers.size(); ++i) {
    ForwardContext context;
    context.layer_index = static_cast<int>(i);
    h = layers[i]->forward(std::move(h), context, saved[i]);
  }
  expect_close(h, c.tensors.at("y"), "y");
  const std::vector<float>& dy_values = c.tensors.at("dy");
  Tensor g = Tensor::host_from(c.batch, static_cast<int64_t>(dy_values.size()) / c.batch, dy_values);
  for (size_t i = layers.size(); i-- > 0;) {
    // Split I and W on even layers, fused B on odd ones: both paths must route the skips' gradients.
    if (i % 2 == 0) {
      Tensor dx = layers[i]->backward_input(g, saved[i]);
      layers[i]->backward_weight(g, saved[i]);
      g = std::move(dx);
    } else {
      g = layers[i]->backward(g, saved[i]);
    }
  }
  expect_close(g, c.tensors.at("dx"), "dx");
  for (auto& layer : layers) {
    for (Parameter* p : layer->parameters()) expect_close(p->grad, c.tensors.at(p->qualified_name() + "_grad"), p->qualified_name());
  }
}

TEST(SkipConnections, BoundariesCarryTheSkipsUntilTheirLastReader) {
  const config::Config cfg = config_of("[2, 6, 5]",
                                       "{type: conv, channels: 4, kernel: 3, padding: periodic, name: e1}\n"
                                       "{type: gelu}\n"
                                       "{type: concat, from: e1}\n"
                                       "{type: conv, channels: 4, kernel: 1}\n"
                                       "{type: add, from: e1, name: s}\n"
                                       "{type: relu}\n"
                                       "{type: concat, from: s}\n");
  const std::vector<LayerShape> shapes = model_shape(cfg.model, {});
  ASSERT_EQ(shapes.size(), 7u);
  const int64_t f = 30;  // 6 x 5 points per channel
  // e1 (4 channels) rides from layer 0's output to the add (layer 4), its last reader; s from 4 to 6.
  const std::vector<int64_t> in = {2 * f, 8 * f, 8 * f, 12 * f, 8 * f, 8 * f, 8 * f};
  const std::vector<int64_t> out = {8 * f, 8 * f, 12 * f, 8 * f, 8 * f, 8 * f, 8 * f};
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_EQ(shapes[i].in, in[i]) << "layer " << i;
    EXPECT_EQ(shapes[i].out, out[i]) << "layer " << i;
  }
  EXPECT_EQ(shapes[2].out_shape, (config::SampleShape{8, 6, 5}));
  EXPECT_EQ(shapes[4].out_shape, (config::SampleShape{4, 6, 5})) << "add keeps the shape";
  EXPECT_EQ(shapes[6].out_shape, (config::SampleShape{8, 6, 5}));
  // What a rank builds for a slice of the model reports the same widths.
  auto middle = build_layers(cfg.model, kernels::cpu_backend(), {}, 2, 4, shapes[2].in_shape);
  EXPECT_EQ(middle.front()->in_features(), in[2]);
  EXPECT_EQ(middle.back()->out_features(), out[3]);
}

std::string refusal(const std::string& layers) {
  try {
    config_of("[2, 6, 5]", layers);
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(SkipConnections, TheConfigRefusesSkipsThatCannotWork) {
  EXPECT_NE(refusal("{type: relu}\n{type: concat, from: nowhere}").find("no earlier layer has that name"),
            std::string::npos);
  EXPECT_NE(refusal("{type: concat, from: later}\n{type: relu, name: later}").find("no earlier layer"),
            std::string::npos);
  EXPECT_NE(refusal("{type: relu, name: a}\n{type: tanh, name: a}").find("'a' is already used"), std::string::npos);
  EXPECT_NE(refusal("{type: relu, name: a}\n{type: conv, channels: 3, kernel: 1}\n{type: add, from: a}")
                .find("add needs the same shape"),
            std::string::npos);
  EXPECT_NE(refusal("{type: relu, name: a}\n{type: conv, channels: 3, kernel: 3}\n{type: concat, from: a}")
                .find("concat joins tensors along the channels"),
            std::string::npos);
  EXPECT_NE(refusal("{type: concat}").find("from"), std::string::npos);
  EXPECT_NE(refusal("{type: relu, name: ''}").find("may not be empty"), std::string::npos);
}

}  // namespace
}  // namespace sluice::model
