#include "core/model/model_shape.h"

#include "core/model/layer_costs.h"

namespace sluice::model {

namespace {

LayerShape custom_shape(size_t index, const config::LayerSpec& layer, int64_t in,
                        const CustomLayerRegistry& custom_layers) {
  const std::unique_ptr<Layer> built = build_custom(index, layer, in, custom_layers);
  LayerShape shape{in, built->out_features(), 0, built->flops_per_sample()};
  for (const Parameter* p : built->parameters()) shape.params += p->value.rows() * p->value.cols();
  return shape;
}

LayerShape builtin_shape(const config::LayerSpec& layer, int64_t in) {
  using config::LayerType;
  switch (layer.type) {
    case LayerType::kLinear:
      return {in, layer.outputs, dense_params(in, layer.outputs, layer.bias), dense_flops(in, layer.outputs)};
    case LayerType::kRelu:
    case LayerType::kGelu:
    case LayerType::kTanh: return {in, in, 0, activation_flops(config::activation_of(layer.type), in)};
    case LayerType::kLayerNorm: return {in, in, layernorm_params(in), layernorm_flops(in)};
    case LayerType::kDropout: return {in, in, 0, dropout_flops(in)};
    case LayerType::kResidualMlp:
      return {in, in, residual_mlp_params(in, layer.hidden), residual_mlp_flops(in, layer.hidden)};
    case LayerType::kCustom: break;
  }
  return {};  // not reached: custom layers go through custom_shape
}

}  // namespace

std::vector<LayerShape> model_shape(const config::ModelSpec& spec, const CustomLayerRegistry& custom_layers) {
  std::vector<LayerShape> shapes;
  shapes.reserve(spec.layers.size());
  int64_t width = spec.inputs;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const config::LayerSpec& layer = spec.layers[i];
    shapes.push_back(layer.type == config::LayerType::kCustom ? custom_shape(i, layer, width, custom_layers)
                                                              : builtin_shape(layer, width));
    width = shapes.back().out;
  }
  return shapes;
}

std::vector<double> flops_of(const std::vector<LayerShape>& shapes) {
  std::vector<double> flops;
  flops.reserve(shapes.size());
  for (const LayerShape& s : shapes) flops.push_back(s.flops);
  return flops;
}

}  // namespace sluice::model
