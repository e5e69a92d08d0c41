#include "core/config/layer_spec_parser.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/activation.h"

namespace sluice::config {

namespace {

// residual_mlp's `activation`, spelled as kernels::activation_name spells them, in the order errors list them.
const std::vector<std::string> kActivations = {"relu", "gelu", "tanh"};

int64_t positive_int(const ConfigNode& node) {
  const int64_t value = node.as_int();
  if (value <= 0) node.fail("expected a positive integer, got " + node.describe_value());
  return value;
}

// A size given once for every spatial dimension (`kernel: 3`) or once per dimension (`kernel: [3, 1]`, 1 to 3).
std::vector<int64_t> positive_ints(const ConfigNode& node) {
  if (!node.is_sequence()) return {positive_int(node)};
  const std::vector<ConfigNode> values = node.elements();
  if (values.empty() || values.size() > 3) {
    node.fail("expected one positive integer or a list of 1 to 3 (one per spatial dimension), got " +
              std::to_string(values.size()) + " values");
  }
  std::vector<int64_t> result;
  for (const ConfigNode& value : values) result.push_back(positive_int(value));
  return result;
}

void parse_conv(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys(
      {"type", "name", "channels", "kernel", "stride", "dilation", "groups", "padding", "bias"}, "a conv layer");
  layer.channels = positive_int(entry.child("channels"));
  layer.kernel = positive_ints(entry.child("kernel"));
  if (entry.has("stride")) layer.stride = positive_ints(entry.child("stride"));
  if (entry.has("dilation")) layer.dilation = positive_ints(entry.child("dilation"));
  if (entry.has("groups")) layer.groups = positive_int(entry.child("groups"));
  if (entry.has("padding")) {
    const std::string name = entry.child("padding").as_choice(padding_names());
    layer.padding = static_cast<Padding>(std::find(padding_names().begin(), padding_names().end(), name) -
                                         padding_names().begin());
  }
  if (entry.has("bias")) layer.bias = entry.child("bias").as_bool();
}

// A normalization's `eps`, 1e-5 (PyTorch's) when not given.
void parse_eps(const ConfigNode& entry, LayerSpec& layer) {
  if (!entry.has("eps")) return;
  const ConfigNode eps = entry.child("eps");
  layer.eps = eps.as_double();
  if (!(layer.eps > 0.0)) eps.fail("expected a positive number, got " + eps.describe_value());
}

void parse_conv_transpose(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "channels", "kernel", "stride", "bias"}, "a conv_transpose layer");
  layer.channels = positive_int(entry.child("channels"));
  layer.kernel = positive_ints(entry.child("kernel"));
  if (entry.has("stride")) layer.stride = positive_ints(entry.child("stride"));
  if (entry.has("bias")) layer.bias = entry.child("bias").as_bool();
}

void parse_pool(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "mode", "kernel"}, "a pool layer");
  layer.mode = entry.child("mode").as_choice({"max", "avg"});
  layer.kernel = positive_ints(entry.child("kernel"));
}

void parse_upsample(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "factor", "mode"}, "an upsample layer");
  layer.factor = positive_ints(entry.child("factor"));
  layer.mode = entry.has("mode") ? entry.child("mode").as_choice({"nearest", "linear"}) : "nearest";
}

void parse_linear(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "outputs", "bias"}, "a linear layer");
  layer.outputs = positive_int(entry.child("outputs"));
  if (entry.has("bias")) layer.bias = entry.child("bias").as_bool();
}

// relu, gelu, tanh, flatten: nothing but the type (and a name).
void parse_plain(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name"}, "a " + layer_type_name(layer.type) + " layer");
}

void parse_join(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "from"}, "a " + layer_type_name(layer.type) + " layer");
  const ConfigNode from = entry.child("from");
  layer.from = from.as_string();
  if (layer.from.empty()) from.fail("expected the name of an earlier layer");
}

// layernorm, instance_norm: an optional eps.
void parse_norm(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "eps"}, "a " + layer_type_name(layer.type) + " layer");
  parse_eps(entry, layer);
}

void parse_group_norm(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "groups", "eps"}, "a group_norm layer");
  layer.groups = positive_int(entry.child("groups"));
  parse_eps(entry, layer);
}

void parse_dropout(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "p"}, "a dropout layer");
  const ConfigNode p = entry.child("p");
  layer.p = p.as_double();
  if (!(layer.p >= 0.0 && layer.p < 1.0)) p.fail("dropout probability must satisfy 0 <= p < 1, got " + p.describe_value());
}

void parse_residual_mlp(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "hidden", "activation"}, "a residual_mlp layer");
  layer.hidden = positive_int(entry.child("hidden"));
  if (entry.has("activation")) {
    layer.activation = kernels::parse_activation(entry.child("activation").as_choice(kActivations));
  }
}

// `{type: custom, name: N[, outputs: F | [C, D1[, D2[, D3]]]][, cost: {flops: F[, bytes: B]}]}`: the name the
// application registers the layer under, and what `sluice plan` and the partition may know without it.
// A sample shape written in a layer entry: a feature count F, or [C, D1[, D2[, D3]]].
std::vector<int64_t> parse_sample_shape(const ConfigNode& node) {
  if (!node.is_sequence()) return {positive_int(node)};
  std::vector<int64_t> shape;
  for (const ConfigNode& value : node.elements()) shape.push_back(positive_int(value));
  if (shape.empty() || shape.size() > 4) {
    node.fail("expected a feature count or a shape [C, D1[, D2[, D3]]] (1 to 4 extents), got " +
              std::to_string(shape.size()) + " values");
  }
  return shape;
}

void parse_custom(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "outputs", "cost"}, "a custom layer");
  const ConfigNode name = entry.child("name");
  layer.name = name.as_string();
  if (layer.name.empty()) name.fail("a custom layer needs the non-empty name it was registered under");
  if (entry.has("outputs")) layer.declared_outputs = parse_sample_shape(entry.child("outputs"));
  if (entry.has("cost")) {
    const ConfigNode cost = entry.child("cost");
    cost.require_map_with_keys({"flops", "bytes"}, "a custom layer's cost (forward FLOPs and stashed bytes per sample)");
    auto non_negative = [](const ConfigNode& node) {
      const double value = node.as_double();
      if (!(value >= 0.0)) node.fail("expected a number >= 0, got " + node.describe_value());
      return value;
    };
    if (cost.has("flops")) layer.cost_flops = non_negative(cost.child("flops"));
    if (cost.has("bytes")) layer.cost_bytes = non_negative(cost.child("bytes"));
  }
}
// `{type: custom, name: N[, outputs: F | [C, D1[, D2[, D3]]]][, cost: {flops: F[, bytes: B]}]}`: the name the
// application registers the layer under, and what `sluice plan` and the partition may know without it.

// `{type: reshape, shape: F | [C, D1[, D2[, D3]]]}`: the same values seen as another sample shape (rows to a
// field and back); that the element counts agree is the shape rule's check (sample_shape.cc).
void parse_reshape(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "shape"}, "a reshape layer");
  layer.shape = parse_sample_shape(entry.child("shape"));
}

// `{type: spectral_conv | fno_block, channels: N, modes: [m1, .., mk]}`: one positive modes value per spatial
// dimension; that they fit the input's extents is the shape rule's check (sample_shape.cc).
void parse_spectral(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "channels", "modes"}, "a " + layer_type_name(layer.type) + " layer");
  layer.channels = positive_int(entry.child("channels"));
  layer.modes = positive_ints(entry.child("modes"));
}

// `{type: patch_embed, patch: P | [p1, ..], dim: D}`: a field cut into patches, each a token of D features.
void parse_patch_embed(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "patch", "dim"}, "a patch_embed layer");
  layer.patch = positive_ints(entry.child("patch"));
  layer.dim = positive_int(entry.child("dim"));
}

// `{type: transformer, heads: H[, mlp_ratio: 4][, dropout: 0][, eps: 1e-5]}`: a pre-norm block over [D, T] tokens;
// `dropout` is its attention dropout.
void parse_transformer(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "heads", "mlp_ratio", "dropout", "eps"}, "a transformer layer");
  layer.heads = positive_int(entry.child("heads"));
  if (entry.has("mlp_ratio")) layer.mlp_ratio = positive_int(entry.child("mlp_ratio"));
  if (entry.has("dropout")) {
    const ConfigNode dropout = entry.child("dropout");
    layer.p = dropout.as_double();
    if (!(layer.p >= 0.0 && layer.p < 1.0)) {
      dropout.fail("attention dropout must satisfy 0 <= p < 1, got " + dropout.describe_value());
    }
  }
  parse_eps(entry, layer);
}

// `{type: unpatch, patch: P | [p1, ..], channels: C, grid: [g1, ..]}`: [D, T] tokens back to a field
// [C, g1·p1, ..]; `grid` is the token grid of the patch_embed it inverts.
void parse_unpatch(const ConfigNode& entry, LayerSpec& layer) {
  entry.require_map_with_keys({"type", "name", "patch", "channels", "grid"}, "an unpatch layer");
  layer.patch = positive_ints(entry.child("patch"));
  layer.channels = positive_int(entry.child("channels"));
  layer.grid = positive_ints(entry.child("grid"));
}

// Each layer type's keys and checks: one parser per type (a new type adds its row here).
using TypeParser = void (*)(const ConfigNode& entry, LayerSpec& layer);
struct ParserRow {
  LayerType type;
  TypeParser parse;
};
constexpr ParserRow kParsers[] = {
    {LayerType::kLinear, parse_linear},         {LayerType::kRelu, parse_plain},
    {LayerType::kGelu, parse_plain},            {LayerType::kTanh, parse_plain},
    {LayerType::kLayerNorm, parse_norm},        {LayerType::kDropout, parse_dropout},
    {LayerType::kResidualMlp, parse_residual_mlp}, {LayerType::kConv, parse_conv},
    {LayerType::kFlatten, parse_plain},         {LayerType::kGroupNorm, parse_group_norm},
    {LayerType::kInstanceNorm, parse_norm},     {LayerType::kConvTranspose, parse_conv_transpose},
    {LayerType::kPool, parse_pool},             {LayerType::kUpsample, parse_upsample},
    {LayerType::kConcat, parse_join},           {LayerType::kAdd, parse_join},
    {LayerType::kReshape, parse_reshape},
    {LayerType::kSpectralConv, parse_spectral}, {LayerType::kFnoBlock, parse_spectral},
    {LayerType::kPatchEmbed, parse_patch_embed}, {LayerType::kTransformer, parse_transformer},
    {LayerType::kUnpatch, parse_unpatch},
    {LayerType::kCustom, parse_custom},
};

void parse_type_fields(const ConfigNode& entry, LayerSpec& layer) {
  for (const ParserRow& row : kParsers) {
    if (row.type == layer.type) return row.parse(entry, layer);
  }
  throw Error(ErrorCode::kInternal, "layer type " + layer_type_name(layer.type) + " has no parser");
}

}  // namespace

LayerSpec parse_layer_spec(const ConfigNode& entry) {
  if (!entry.is_map())
    entry.fail("expected a layer such as {type: linear, outputs: 64}, got " + entry.describe_value());
  LayerSpec layer;
  layer.type = *find_layer_type(entry.child("type").as_choice(layer_type_names()));
  layer.line = entry.line();
  parse_type_fields(entry, layer);
  if (layer.type != LayerType::kCustom && entry.has("name")) {
    const ConfigNode name = entry.child("name");
    layer.name = name.as_string();
    if (layer.name.empty()) name.fail("a layer's name may not be empty");
  }
  return layer;
}

std::vector<LayerSpec> parse_layer_specs(const ConfigNode& layers) {
  std::vector<LayerSpec> specs;
  for (const ConfigNode& entry : layers.elements()) specs.push_back(parse_layer_spec(entry));
  if (specs.empty()) layers.fail("the model needs at least one layer");
  return specs;
}

}  // namespace sluice::config
