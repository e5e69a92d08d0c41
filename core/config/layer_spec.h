// The layer vocabulary, in one place: the layer types and their config names, the typed `model.layers` entry,
// and what makes two entries the same layer (what shape a layer gives is core/config/sample_shape.h). The parser
// (layer_spec_parser.cc) is the only code that checks an entry; everything else trusts a LayerSpec it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/activation.h"

namespace sluice::config {

enum class LayerType {
  kLinear, kRelu, kGelu, kTanh, kLayerNorm, kDropout, kResidualMlp, kConv, kFlatten, kGroupNorm, kInstanceNorm,
  kConvTranspose, kPool, kUpsample, kConcat, kAdd, kReshape, kSpectralConv, kFnoBlock, kPatchEmbed, kTransformer,
  kUnpatch, kCustom
};

// conv's `padding`: none (PyTorch's default), or the size kept at stride 1 with zeros, the field's periodic wrap
// (PyTorch's padding_mode='circular') or its mirror image without the edge (PyTorch's 'reflect').
enum class Padding { kNone, kZeros, kPeriodic, kReflect };
const std::vector<std::string>& padding_names();  // indexed by Padding, as the YAML spells them
const std::string& padding_name(Padding padding);

// Every layer type, in the order error messages list them; layer_type_names() is the same list spelled as in
// the YAML (`type: residual_mlp`).
const std::vector<LayerType>& layer_types();
const std::vector<std::string>& layer_type_names();
const std::string& layer_type_name(LayerType type);
// The type spelled `name` in the YAML; std::nullopt when no type is.
std::optional<LayerType> find_layer_type(const std::string& name);

// Whether the CUDA backend has the type's kernels; the config parser refuses the others on a cuda stage, naming
// the layer, before anything runs (a custom layer is the application's: its callbacks decide).
bool runs_on_cuda(LayerType type);
// Whether the layer can run on one block of a field split by `pipeline.domain` (exchanging halos of its input);
// a split is refused with the first layer that cannot, naming it (core/config/domain_layout.h).
bool runs_split(LayerType type);

// relu, gelu and tanh: layers that apply `activation_of(type)` element-wise.
bool is_activation(LayerType type);
kernels::Activation activation_of(LayerType type);  // only for is_activation(type)
// patch_embed, transformer and unpatch: the layers that make, transform or read tokens [D, T]; the shape rule, the
// builder and the cost model handle them in one place each (their own functions), before their per-type switches.
bool is_token_layer(LayerType type);

// One entry of `model.layers`. Only the fields that matter for `type` are set; the parser rejects keys a type
// does not know and values it cannot use, so code that receives a LayerSpec does not check it again.
struct LayerSpec {
  LayerType type = LayerType::kLinear;
  int64_t outputs = 0;     // linear: output features
  int64_t hidden = 0;      // residual_mlp: hidden width of its inner Linear -> act -> Linear
  kernels::Activation activation = kernels::Activation::kGelu;  // residual_mlp: relu | gelu | tanh
  double p = 0.0;          // dropout probability; transformer: its `dropout` (only 0 in this version)
  double eps = 1e-5;       // layernorm, group_norm, instance_norm, transformer (its two norms) epsilon
  bool bias = true;        // linear, conv, conv_transpose: with bias
  int64_t channels = 0;    // conv, conv_transpose, spectral_conv, fno_block: output channels
  // conv, conv_transpose (kernel, stride), pool (kernel): one value for every spatial dimension, or one per
  // dimension (core/config/sample_shape.h resolves them against the input's dimensions)
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride{1};
  std::vector<int64_t> dilation{1};
  int64_t groups = 1;      // conv: channel groups; group_norm: groups of channels sharing statistics
  Padding padding = Padding::kNone;  // conv
  std::string mode;        // pool: "max" | "avg"; upsample: "nearest" (default) | "linear"
  std::vector<int64_t> factor;  // upsample: integer factors, one for every spatial dimension or one per dimension
  std::vector<int64_t> shape;   // reshape: the sample shape it gives, F or [C, D1[, D2[, D3]]] (same element count)
  std::vector<int64_t> modes;   // spectral_conv, fno_block: Fourier modes kept, one per spatial dimension
  // patch_embed, unpatch: the patch extents, one for every spatial dimension or one per dimension. Tokens are
  // [D, T] fields (D features of each of T tokens, channel-first; core/model/transformer_layer.h).
  std::vector<int64_t> patch;
  int64_t dim = 0;         // patch_embed: D, the features of each token
  int64_t heads = 0;       // transformer: attention heads (divide D)
  int64_t mlp_ratio = 4;   // transformer: the MLP's hidden width is mlp_ratio · D
  std::vector<int64_t> grid;  // unpatch: the token grid (the patch_embed's n_i / p_i), Π grid = T
  // custom: the name the application registered the layer under. Any other layer: optional, the name a later
  // concat or add reads its output by (a skip connection).
  std::string name;
  std::string from;        // concat, add: the name of the earlier layer whose output joins the current tensor
  // custom, optional: the output shape (`outputs: F` or `[C, D1[, D2[, D3]]]`) and forward cost per sample (`cost:
  // {flops: .., bytes: ..}`, 0 = not given) the application declares, so that `sluice plan` can plan the model
  // without the layer and the partition weighs it by its declared FLOPs (sluice_layer_ops::forward_flops).
  std::vector<int64_t> declared_outputs;
  double cost_flops = 0.0;  // forward FLOPs per sample
  double cost_bytes = 0.0;  // bytes a sample keeps from forward to backward
  int line = 0;            // 1-based line in the YAML text, for error messages (0 if unknown)
};

// Two entries describe the same layer: every field but `line` (where the entry was written) and a custom layer's
// declared cost (a planning hint) is equal. A
// restart checks its model against the checkpoint's with this, so moving an entry in the file is no change.
bool operator==(const LayerSpec& a, const LayerSpec& b);
bool operator!=(const LayerSpec& a, const LayerSpec& b);

// The first field in which `was` and `is` differ, named by its YAML key, with both values as text;
// std::nullopt when was == is.
struct LayerSpecDifference {
  std::string key;  // "type", "outputs", ...
  std::string was;
  std::string is;
};
std::optional<LayerSpecDifference> first_difference(const LayerSpec& was, const LayerSpec& is);

}  // namespace sluice::config
