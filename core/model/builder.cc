#include "core/model/builder.h"

#include <string>

#include "core/common/error.h"
#include "core/model/activation_layer.h"
#include "core/model/dropout_layer.h"
#include "core/model/layernorm_layer.h"
#include "core/model/linear_layer.h"
#include "core/model/residual_mlp_layer.h"

namespace sluice::model {
namespace {

std::string where(size_t index, const config::LayerSpec& layer) {
  std::string text = "model.layers[" + std::to_string(index) + "]";
  if (layer.line > 0) text += " (line " + std::to_string(layer.line) + ")";
  return text;
}

[[noreturn]] void fail(size_t index, const config::LayerSpec& layer, const std::string& problem) {
  throw Error(ErrorCode::kConfig, where(index, layer) + ": " + problem);
}

std::unique_ptr<Layer> build_custom(size_t index, const config::LayerSpec& layer, int64_t width,
                                    const CustomLayerRegistry& custom_layers) {
  if (layer.name.empty()) fail(index, layer, "custom layer needs a 'name'");
  const auto found = custom_layers.find(layer.name);
  if (found == custom_layers.end()) {
    fail(index, layer, "no custom layer is registered under the name '" + layer.name + "'");
  }
  std::unique_ptr<Layer> built = found->second(width);
  if (!built) fail(index, layer, "the factory of custom layer '" + layer.name + "' returned no layer");
  if (built->in_features() != width) {
    fail(index, layer, "custom layer '" + layer.name + "' takes " + std::to_string(built->in_features()) +
                           " inputs but the previous layer gives " + std::to_string(width));
  }
  if (built->out_features() <= 0) {
    fail(index, layer, "custom layer '" + layer.name + "' reports " + std::to_string(built->out_features()) +
                           " outputs; it needs at least 1");
  }
  return built;
}

std::unique_ptr<Layer> build_one(size_t index, const config::LayerSpec& layer, int64_t width,
                                 kernels::Backend& backend, const CustomLayerRegistry& custom_layers) {
  const std::string& type = layer.type;
  if (type == "linear") {
    if (layer.outputs <= 0) {
      fail(index, layer, "linear needs 'outputs' > 0, got " + std::to_string(layer.outputs));
    }
    return std::make_unique<LinearLayer>(backend, width, layer.outputs, layer.bias);
  }
  if (type == "relu" || type == "gelu" || type == "tanh") {
    return std::make_unique<ActivationLayer>(backend, kernels::parse_activation(type), width);
  }
  if (type == "layernorm") {
    if (!(layer.eps > 0.0)) fail(index, layer, "layernorm needs 'eps' > 0, got " + std::to_string(layer.eps));
    return std::make_unique<LayerNormLayer>(backend, width, static_cast<float>(layer.eps));
  }
  if (type == "dropout") {
    if (!(layer.p >= 0.0 && layer.p < 1.0)) {
      fail(index, layer, "dropout needs 'p' in [0, 1), got " + std::to_string(layer.p));
    }
    return std::make_unique<DropoutLayer>(backend, width, static_cast<float>(layer.p));
  }
  if (type == "residual_mlp") {
    if (layer.hidden <= 0) {
      fail(index, layer, "residual_mlp needs 'hidden' > 0, got " + std::to_string(layer.hidden));
    }
    const std::string activation = layer.activation.empty() ? "gelu" : layer.activation;
    if (activation != "relu" && activation != "gelu" && activation != "tanh") {
      fail(index, layer, "residual_mlp 'activation' must be relu, gelu or tanh, got '" + activation + "'");
    }
    return std::make_unique<ResidualMlpLayer>(backend, width, layer.hidden, kernels::parse_activation(activation));
  }
  if (type == "custom") return build_custom(index, layer, width, custom_layers);
  if (type.empty()) fail(index, layer, "layer has no 'type'");
  fail(index, layer,
       "unknown layer type '" + type +
           "' (expected linear, relu, gelu, tanh, layernorm, dropout, residual_mlp or custom)");
}

}  // namespace

std::vector<std::unique_ptr<Layer>> build_layers(const config::ModelSpec& spec, kernels::Backend& backend,
                                                 const CustomLayerRegistry& custom_layers) {
  if (spec.inputs <= 0) {
    throw Error(ErrorCode::kConfig, "model.inputs must be > 0, got " + std::to_string(spec.inputs));
  }
  if (spec.layers.empty()) throw Error(ErrorCode::kConfig, "model.layers is empty; the model needs a layer");
  std::vector<std::unique_ptr<Layer>> layers;
  int64_t width = spec.inputs;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    std::unique_ptr<Layer> layer = build_one(i, spec.layers[i], width, backend, custom_layers);
    layer->set_global_index(static_cast<int>(i));
    width = layer->out_features();
    layers.push_back(std::move(layer));
  }
  return layers;
}

void init_layers(std::vector<std::unique_ptr<Layer>>& layers, uint64_t seed) {
  for (auto& layer : layers) {
    if (layer) layer->init(seed);
  }
}

}  // namespace sluice::model
