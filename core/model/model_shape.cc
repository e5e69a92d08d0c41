#include "core/model/model_shape.h"

#include "core/model/layer_costs.h"
#include "core/model/skip_plan.h"

namespace sluice::model {

namespace {

LayerShape custom_shape(size_t index, const config::LayerSpec& layer, int64_t in,
                        const CustomLayerRegistry& custom_layers) {
  const std::unique_ptr<Layer> built = build_custom(index, layer, in, custom_layers);
  // The cost the config declares (`cost: {flops, bytes}`) wins over the layer's own (sluice_layer_ops): forward
  // FLOPs count 3 times, for the forward and the two backward halves.
  LayerShape shape{in, built->out_features(), 0,
                   layer.cost_flops > 0.0 ? 3.0 * layer.cost_flops : built->flops_per_sample()};
  shape.stash_bytes = layer.cost_bytes > 0.0 ? layer.cost_bytes : built->stash_bytes_per_sample();
  shape.arrays = built->arrays();
  for (const Parameter* p : built->parameters()) shape.params += p->value.rows() * p->value.cols();
  return shape;
}

// spectral_conv and fno_block taking the field `in_shape`.
LayerShape spectral_shape(const config::LayerSpec& layer, const config::SampleShape& in_shape, int64_t out) {
  const int64_t in = config::features_of(in_shape);
  const kernels::SpectralGeometry g = config::spectral_geometry(layer, in_shape);
  if (layer.type == config::LayerType::kFnoBlock) return {in, out, fno_block_params(g), fno_block_flops(g)};
  return {in, out, spectral_params(g), spectral_flops(g)};
}

// patch_embed, transformer, unpatch (config::is_token_layer): as the built layers report them.
LayerShape token_shape(const config::LayerSpec& layer, const config::SampleShape& in_shape, int64_t out) {
  const int64_t in = config::features_of(in_shape);
  if (layer.type == config::LayerType::kPatchEmbed) {
    const kernels::ConvGeometry geometry = config::patch_embed_geometry(layer, in_shape);
    return {in, out, patch_embed_params(geometry), patch_embed_flops(geometry)};
  }
  if (layer.type == config::LayerType::kUnpatch) return {in, out, 0, 2.0 * static_cast<double>(in)};
  const int64_t hidden = layer.mlp_ratio * in_shape[0];
  LayerShape shape{in, out, transformer_params(in_shape[0], hidden),
                   transformer_flops(in_shape[0], in_shape[1], layer.heads, hidden)};
  shape.stash_bytes = transformer_stash_bytes(in_shape[0], in_shape[1], layer.heads, hidden);
  return shape;
}

// Features, parameters and FLOPs of a built-in layer taking `in_shape` (its output shape is already known).
LayerShape builtin_shape(const config::LayerSpec& layer, const config::SampleShape& in_shape, int64_t out) {
  using config::LayerType;
  const int64_t in = config::features_of(in_shape);
  switch (layer.type) {
    case LayerType::kLinear:
      return {in, out, dense_params(in, layer.outputs, layer.bias), dense_flops(in, layer.outputs)};
    case LayerType::kRelu:
    case LayerType::kGelu:
    case LayerType::kTanh: return {in, out, 0, activation_flops(config::activation_of(layer.type), in)};
    case LayerType::kLayerNorm:
      if (!config::is_field(in_shape)) return {in, out, layernorm_params(in), layernorm_flops(in)};
      return {in, out, field_norm_params(in_shape[0]), field_norm_flops(in)};
    case LayerType::kGroupNorm:
    case LayerType::kInstanceNorm: return {in, out, field_norm_params(in_shape[0]), field_norm_flops(in)};
    case LayerType::kDropout: return {in, out, 0, dropout_flops(in)};
    case LayerType::kResidualMlp:
      return {in, out, residual_mlp_params(in, layer.hidden), residual_mlp_flops(in, layer.hidden)};
    case LayerType::kConv: {
      const kernels::ConvGeometry geometry = config::conv_geometry(layer, in_shape);
      return {in, out, conv_params(geometry, layer.bias), conv_flops(geometry)};
    }
    case LayerType::kFlatten:
    case LayerType::kReshape: return {in, out, 0, 0.0};
    case LayerType::kConcat:
    case LayerType::kAdd: return {in, out, 0, static_cast<double>(out)};
    case LayerType::kConvTranspose: {
      const kernels::DeconvGeometry geometry = config::deconv_geometry(layer, in_shape);
      return {in, out, deconv_params(geometry, layer.bias), deconv_flops(geometry)};
    }
    case LayerType::kPool: return {in, out, 0, pool_flops(config::pool_geometry(layer, in_shape))};
    case LayerType::kUpsample: return {in, out, 0, resample_flops(config::resample_geometry(layer, in_shape))};
    case LayerType::kCustom: break;
    default: return spectral_shape(layer, in_shape, out);  // spectral_conv, fno_block (kept out of this switch's count)
  }
  return {};  // not reached: custom layers go through custom_shape
}

// A boundary's width includes the skip tensors carried across it (core/model/skip_plan.h): what the pipeline sends.
void add_carried_skips(const std::vector<config::LayerSpec>& layers, std::vector<LayerShape>& shapes) {
  if (!config::has_skips(layers)) return;
  std::vector<int64_t> main_out;
  for (const LayerShape& shape : shapes) main_out.push_back(shape.out);
  const std::vector<LayerCarry> plan = skip_plan(layers, main_out);
  for (size_t i = 0; i < shapes.size(); ++i) {
    shapes[i].in += carried_features(plan[i].in);
    shapes[i].out += carried_features(plan[i].out);
  }
}

}  // namespace

std::vector<LayerShape> model_shape(const config::ModelSpec& spec, const CustomLayerRegistry& custom_layers) {
  std::vector<LayerShape> shapes;
  shapes.reserve(spec.layers.size());
  config::ShapeWalk walk(config::input_shape_of(spec));
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const config::LayerSpec& layer = spec.layers[i];
    const config::SampleShape in_shape = walk.current();
    if (layer.type == config::LayerType::kCustom) {
      shapes.push_back(custom_shape(i, layer, config::features_of(in_shape), custom_layers));
      walk.next(layer, [&](const std::string&, int64_t) { return shapes.back().out; });
    } else {
      walk.next(layer);
      const int64_t out = config::features_of(walk.current());
      shapes.push_back(config::is_token_layer(layer.type) ? token_shape(layer, in_shape, out)
                                                          : builtin_shape(layer, in_shape, out));
    }
    shapes.back().in_shape = in_shape;
    shapes.back().out_shape = walk.current();
  }
  add_carried_skips(spec.layers, shapes);
  return shapes;
}

std::vector<double> flops_of(const std::vector<LayerShape>& shapes) {
  std::vector<double> flops;
  flops.reserve(shapes.size());
  for (const LayerShape& s : shapes) flops.push_back(s.flops);
  return flops;
}

PartitionCosts partition_costs(const std::vector<LayerShape>& shapes, const config::PipelineSpec& pipeline) {
  constexpr double kBytesPerFloat = 4.0;
  PartitionCosts costs{flops_of(shapes), {}};
  const double flops_per_byte = pipeline.flop_rate / pipeline.bandwidth;
  for (const LayerShape& shape : shapes) {
    costs.boundaries.push_back(2.0 * kBytesPerFloat * static_cast<double>(shape.out) * flops_per_byte);
  }
  return costs;
}

SkipRoutes skip_routes_of(const config::ModelSpec& spec, const std::vector<LayerShape>& shapes,
                          const std::vector<LayerRange>& ranges) {
  if (!config::has_skips(spec.layers)) return {};
  std::vector<int64_t> main_out;
  for (const LayerShape& shape : shapes) main_out.push_back(config::features_of(shape.out_shape));
  return skip_routes(spec.layers, main_out, ranges);
}

}  // namespace sluice::model
