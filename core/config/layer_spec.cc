#include "core/config/layer_spec.h"

#include <cstddef>
#include <utility>

#include "core/common/error.h"

namespace sluice::config {

namespace {

struct TypeEntry {
  LayerType type;
  std::string name;
  bool cuda = true;  // the CUDA backend has its kernels (false: CPU only, refused on a cuda stage at parse)
  // It can run on one block of a field split by pipeline.domain, given halos of its input (false: it needs the
  // whole sample — rows, a reshaping of the sample, a global FFT, attention over every token — or, for custom, an
  // application callback that sees only its block). core/config/domain_layout.h refuses the others under a split.
  bool splits = true;
};

// The one table of layer types, their YAML names, whether they run on a cuda stage and on a block of a split field.
// Every type has CUDA kernels now (the spectral and token layers since their cuFFT/cuBLAS ops,
// kernels/cuda/cuda_spectral_ops.cc and cuda_attention_ops.cc); a future type without them is marked false and refused
// at parse.
const std::vector<TypeEntry>& type_table() {
  static const std::vector<TypeEntry> table = {
      {LayerType::kLinear, "linear", true, false}, {LayerType::kRelu, "relu"}, {LayerType::kGelu, "gelu"},
      {LayerType::kTanh, "tanh"},           {LayerType::kLayerNorm, "layernorm"}, {LayerType::kDropout, "dropout"},
      {LayerType::kResidualMlp, "residual_mlp", true, false}, {LayerType::kConv, "conv"},
      {LayerType::kFlatten, "flatten", true, false}, {LayerType::kReshape, "reshape", true, false},
      {LayerType::kSpectralConv, "spectral_conv", true, false}, {LayerType::kFnoBlock, "fno_block", true, false},
      {LayerType::kGroupNorm, "group_norm"}, {LayerType::kInstanceNorm, "instance_norm"},
      {LayerType::kConvTranspose, "conv_transpose"}, {LayerType::kPool, "pool"}, {LayerType::kUpsample, "upsample"},
      {LayerType::kConcat, "concat"},       {LayerType::kAdd, "add"},
      {LayerType::kPatchEmbed, "patch_embed", true, false}, {LayerType::kTransformer, "transformer", true, false},
      {LayerType::kUnpatch, "unpatch", true, false}, {LayerType::kCustom, "custom", true, false},
  };
  return table;
}

const TypeEntry& entry_of(LayerType type) {
  for (const TypeEntry& entry : type_table()) {
    if (entry.type == type) return entry;
  }
  throw Error(ErrorCode::kInternal, "layer type " + std::to_string(static_cast<int>(type)) + " is not in the table");
}

// Field values as the checkpoint's restart check prints them.
std::string text(LayerType type) { return layer_type_name(type); }
std::string text(kernels::Activation activation) { return kernels::activation_name(activation); }
std::string text(int64_t value) { return std::to_string(value); }
std::string text(double value) { return std::to_string(value); }
std::string text(bool value) { return value ? "true" : "false"; }
std::string text(const std::string& value) { return value; }
std::string text(Padding value) { return padding_name(value); }
std::string text(const std::vector<int64_t>& values) {
  std::string joined = "[";
  for (size_t i = 0; i < values.size(); ++i) joined += (i ? ", " : "") + std::to_string(values[i]);
  return joined + "]";
}

// Every field that describes a layer, written out once: `visit(key, a.field, b.field)` for each, in the order
// a difference is reported. `line` is not one of them (it is where the entry was written, not what it is).
template <typename Visit>
void visit_fields(const LayerSpec& a, const LayerSpec& b, Visit&& visit) {
  visit("type", a.type, b.type);
  visit("name", a.name, b.name);
  visit("from", a.from, b.from);
  visit("outputs", a.outputs, b.outputs);
  visit("hidden", a.hidden, b.hidden);
  visit("activation", a.activation, b.activation);
  visit("p", a.p, b.p);
  visit("eps", a.eps, b.eps);
  visit("bias", a.bias, b.bias);
  visit("channels", a.channels, b.channels);
  visit("kernel", a.kernel, b.kernel);
  visit("stride", a.stride, b.stride);
  visit("dilation", a.dilation, b.dilation);
  visit("groups", a.groups, b.groups);
  visit("padding", a.padding, b.padding);
  visit("mode", a.mode, b.mode);
  visit("factor", a.factor, b.factor);
  visit("shape", a.shape, b.shape);
  visit("modes", a.modes, b.modes);
  visit("outputs", a.declared_outputs, b.declared_outputs);
  visit("patch", a.patch, b.patch);
  visit("dim", a.dim, b.dim);
  visit("heads", a.heads, b.heads);
  visit("mlp_ratio", a.mlp_ratio, b.mlp_ratio);
  visit("grid", a.grid, b.grid);
}

}  // namespace

bool runs_on_cuda(LayerType type) { return entry_of(type).cuda; }

bool runs_split(LayerType type) { return entry_of(type).splits; }

const std::vector<LayerType>& layer_types() {
  static const std::vector<LayerType> types = [] {
    std::vector<LayerType> all;
    for (const TypeEntry& entry : type_table()) all.push_back(entry.type);
    return all;
  }();
  return types;
}

const std::vector<std::string>& layer_type_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const TypeEntry& entry : type_table()) all.push_back(entry.name);
    return all;
  }();
  return names;
}

const std::string& layer_type_name(LayerType type) {
  for (const TypeEntry& entry : type_table()) {
    if (entry.type == type) return entry.name;
  }
  throw Error(ErrorCode::kInternal, "layer type " + std::to_string(static_cast<int>(type)) + " has no name");
}

std::optional<LayerType> find_layer_type(const std::string& name) {
  for (const TypeEntry& entry : type_table()) {
    if (entry.name == name) return entry.type;
  }
  return std::nullopt;
}

const std::vector<std::string>& padding_names() {
  static const std::vector<std::string> names = {"none", "zeros", "periodic", "reflect"};
  return names;
}

const std::string& padding_name(Padding padding) { return padding_names().at(static_cast<size_t>(padding)); }

bool is_activation(LayerType type) {
  return type == LayerType::kRelu || type == LayerType::kGelu || type == LayerType::kTanh;
}

bool is_token_layer(LayerType type) {
  return type == LayerType::kPatchEmbed || type == LayerType::kTransformer || type == LayerType::kUnpatch;
}

kernels::Activation activation_of(LayerType type) {
  switch (type) {
    case LayerType::kRelu: return kernels::Activation::kRelu;
    case LayerType::kGelu: return kernels::Activation::kGelu;
    case LayerType::kTanh: return kernels::Activation::kTanh;
    default: break;
  }
  throw Error(ErrorCode::kInternal, "layer type " + layer_type_name(type) + " is not an activation");
}

bool operator==(const LayerSpec& a, const LayerSpec& b) { return !first_difference(a, b); }
bool operator!=(const LayerSpec& a, const LayerSpec& b) { return !(a == b); }

std::optional<LayerSpecDifference> first_difference(const LayerSpec& was, const LayerSpec& is) {
  std::optional<LayerSpecDifference> difference;
  visit_fields(was, is, [&](const char* key, const auto& a, const auto& b) {
    if (!difference && !(a == b)) difference = LayerSpecDifference{key, text(a), text(b)};
  });
  return difference;
}

}  // namespace sluice::config
