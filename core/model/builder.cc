#include "core/model/builder.h"

#include <optional>
#include <string>

#include "core/common/error.h"
#include "core/config/layer_spec.h"
#include "core/model/activation_layer.h"
#include "core/model/conv_layer.h"
#include "core/model/conv_transpose_layer.h"
#include "core/model/dropout_layer.h"
#include "core/model/field_norm_layer.h"
#include "core/model/flatten_layer.h"
#include "core/model/fno_block_layer.h"
#include "core/model/layernorm_layer.h"
#include "core/model/linear_layer.h"
#include "core/model/patch_embed_layer.h"
#include "core/model/pool_layer.h"
#include "core/model/residual_mlp_layer.h"
#include "core/model/skip_layer.h"
#include "core/model/skip_plan.h"
#include "core/model/spectral_conv_layer.h"
#include "core/model/transformer_layer.h"
#include "core/model/unpatch_layer.h"
#include "core/model/upsample_layer.h"

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

}  // namespace

// A custom layer's factory is the application's code, not the config: what it returns is checked here.
std::unique_ptr<Layer> build_custom(size_t index, const config::LayerSpec& layer, int64_t width,
                                    const CustomLayerRegistry& custom_layers) {
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

namespace {

// The level of a layer whose whole-field input has shape `in`, on a domain given at the model input's level
// (null without a domain). `what` names the layer in errors.
FieldDomain* level_of(FieldDomain* domain, const config::SampleShape& in, const std::string& what) {
  if (domain == nullptr) return nullptr;
  const std::vector<int64_t>& root = domain->global_extent();
  if (in.size() != root.size() + 1) {
    throw Error(ErrorCode::kUnsupported, what + ": an input of " + std::to_string(in.size()) + " dimensions on a " +
                                             std::to_string(root.size()) + "-D split field");
  }
  std::vector<int64_t> down(root.size(), 1), up(root.size(), 1);
  bool coarser = false, finer = false;
  for (size_t d = 0; d < root.size(); ++d) {
    const int64_t e = in[d + 1];
    if (e <= root[d] && root[d] % e == 0) {
      down[d] = root[d] / e;
    } else if (e % root[d] == 0) {
      up[d] = e / root[d];
    } else {
      throw Error(ErrorCode::kUnsupported, what + ": an input extent " + std::to_string(e) +
                                               " is no integer level of the split field's " + std::to_string(root[d]));
    }
    coarser = coarser || down[d] > 1;
    finer = finer || up[d] > 1;
  }
  if (coarser && finer) {
    throw Error(ErrorCode::kUnsupported, what + ": an input coarser than the split field in one dimension and "
                                                "finer in another");
  }
  return finer ? &domain->refined(up) : &domain->coarsened(down);
}

// A layer input's width per sample: the block's on a domain level.
int64_t width_of(const config::SampleShape& in, const FieldDomain* level) {
  return level != nullptr ? in[0] * level->block_points() : config::features_of(in);
}

// The level layer `index` runs on (null without a domain); kUnsupported naming it when it cannot run on a block.
FieldDomain* block_level(size_t index, const config::LayerSpec& layer, const config::SampleShape& in,
                         FieldDomain* domain) {
  if (domain == nullptr) return nullptr;
  if (!config::runs_split(layer.type)) {  // the layer table's column: every type it marks is built on a block
    throw Error(ErrorCode::kUnsupported, where(index, layer) + ": a " + config::layer_type_name(layer.type) +
                                             " layer needs the whole sample and cannot run on a block of a split "
                                             "field");
  }
  return level_of(domain, in, where(index, layer));
}

// The conv layer a `conv` entry describes on input field `in` (its geometry is config::conv_geometry's), on the
// block of `level` when not null.
std::unique_ptr<Layer> build_conv(const config::LayerSpec& layer, const config::SampleShape& in,
                                  kernels::Backend& backend, FieldDomain* level) {
  std::optional<kernels::PadMode> explicit_padding;
  if (layer.padding == config::Padding::kPeriodic) explicit_padding = kernels::PadMode::kPeriodic;
  if (layer.padding == config::Padding::kReflect) explicit_padding = kernels::PadMode::kReflect;
  return std::make_unique<ConvLayer>(backend, config::conv_geometry(layer, in), layer.bias, explicit_padding, level);
}

// group_norm, instance_norm and layernorm on a field (on `level`'s block when not null), and layernorm on rows (its
// existing layer).
std::unique_ptr<Layer> build_norm(const config::LayerSpec& layer, const config::SampleShape& in,
                                  kernels::Backend& backend, FieldDomain* level) {
  const std::string type = config::layer_type_name(layer.type);
  if (layer.type == config::LayerType::kLayerNorm) {
    if (!config::is_field(in)) {
      return std::make_unique<LayerNormLayer>(backend, config::features_of(in), static_cast<float>(layer.eps));
    }
    return std::make_unique<FieldNormLayer>(backend, type, FieldNormLayer::Over::kChannelsAtEachPoint,
                                            config::norm_geometry(layer, in), level);
  }
  return std::make_unique<FieldNormLayer>(backend, type, FieldNormLayer::Over::kGroups,
                                          config::norm_geometry(layer, in), level);
}

// spectral_conv and fno_block on input field `in`.
std::unique_ptr<Layer> build_spectral(const config::LayerSpec& layer, const config::SampleShape& in,
                                      kernels::Backend& backend) {
  const kernels::SpectralGeometry geometry = config::spectral_geometry(layer, in);
  if (layer.type == config::LayerType::kFnoBlock) return std::make_unique<FnoBlockLayer>(backend, geometry);
  return std::make_unique<SpectralConvLayer>(backend, geometry);
}

// patch_embed, transformer, unpatch (config::is_token_layer) on input `in`.
std::unique_ptr<Layer> build_tokens(const config::LayerSpec& layer, const config::SampleShape& in,
                                    kernels::Backend& backend) {
  if (layer.type == config::LayerType::kPatchEmbed) {
    return std::make_unique<PatchEmbedLayer>(backend, config::patch_embed_geometry(layer, in));
  }
  if (layer.type == config::LayerType::kUnpatch) {
    return std::make_unique<UnpatchLayer>(backend, config::unpatch_source(layer, in));
  }
  config::require_tokens(layer, in);
  return std::make_unique<TransformerLayer>(backend, in[0], in[1], layer.heads, layer.mlp_ratio,
                                            static_cast<float>(layer.eps), static_cast<float>(layer.p));
}

// The layers of the field ops that run on a block, on `level`'s block.
std::unique_ptr<Layer> build_sampling(const config::LayerSpec& layer, const config::SampleShape& in,
                                      kernels::Backend& backend, FieldDomain* level) {
  using config::LayerType;
  if (layer.type == LayerType::kConvTranspose) {
    return std::make_unique<ConvTransposeLayer>(backend, config::deconv_geometry(layer, in), layer.bias, level);
  }
  if (layer.type == LayerType::kPool) {
    return std::make_unique<PoolLayer>(backend, config::pool_geometry(layer, in), level);
  }
  return std::make_unique<UpsampleLayer>(backend, config::resample_geometry(layer, in), level);
}

// `layer` was checked by the config parser (core/config/layer_spec_parser.cc); it is built as it is, on the block
// of `domain` (the model input's level) when not null.
std::unique_ptr<Layer> build_one(size_t index, const config::LayerSpec& layer, const config::SampleShape& in,
                                 kernels::Backend& backend, const CustomLayerRegistry& custom_layers,
                                 FieldDomain* domain) {
  using config::LayerType;
  FieldDomain* level = block_level(index, layer, in, domain);
  const int64_t width = width_of(in, level);
  if (config::is_token_layer(layer.type)) return build_tokens(layer, in, backend);
  switch (layer.type) {
    case LayerType::kLinear: return std::make_unique<LinearLayer>(backend, width, layer.outputs, layer.bias);
    case LayerType::kRelu:
    case LayerType::kGelu:
    case LayerType::kTanh:
      return std::make_unique<ActivationLayer>(backend, config::activation_of(layer.type), width);
    case LayerType::kLayerNorm:
    case LayerType::kGroupNorm:
    case LayerType::kInstanceNorm: return build_norm(layer, in, backend, level);
    case LayerType::kDropout:
      return std::make_unique<DropoutLayer>(backend, width, static_cast<float>(layer.p), level);
    case LayerType::kResidualMlp:
      return std::make_unique<ResidualMlpLayer>(backend, width, layer.hidden, layer.activation);
    case LayerType::kConv: return build_conv(layer, in, backend, level);
    case LayerType::kFlatten:
    case LayerType::kReshape: return std::make_unique<FlattenLayer>(config::layer_type_name(layer.type), width);
    case LayerType::kConvTranspose:
    case LayerType::kPool:
    case LayerType::kUpsample: return build_sampling(layer, in, backend, level);
    case LayerType::kCustom: return build_custom(index, layer, width, custom_layers);
    case LayerType::kConcat:
    case LayerType::kAdd: break;  // skip readers are SkipLayers (build_with_skips)
    default: return build_spectral(layer, in, backend);  // spectral_conv, fno_block (kept out of this switch's count)
  }
  throw Error(ErrorCode::kInternal, where(index, layer) + ": layer type " +
                                        std::to_string(static_cast<int>(layer.type)) + " has no builder");
}

// A model with skip connections: the whole layer list is walked for the skips' widths (custom layers outside
// [first, last) are built once and dropped, as model_shape does), and the layers in range that carry or read a skip
// are wrapped in a SkipLayer (core/model/skip_layer.h). The layers carry only the skips [first, last) makes or reads
// (a pipeline stage's: skip_plan's ranged form).
std::vector<std::unique_ptr<Layer>> build_with_skips(const config::ModelSpec& spec, kernels::Backend& backend,
                                                     const CustomLayerRegistry& custom_layers, int first, int last,
                                                     FieldDomain* domain) {
  config::ShapeWalk walk(config::input_shape_of(spec));
  std::vector<int64_t> main_in, main_out;
  std::vector<std::unique_ptr<Layer>> inner(spec.layers.size());
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const config::LayerSpec& layer = spec.layers[i];
    const bool in_range = static_cast<int>(i) >= first && static_cast<int>(i) < last;
    const bool joins = layer.type == config::LayerType::kConcat || layer.type == config::LayerType::kAdd;
    main_in.push_back(width_of(walk.current(), level_of(domain, walk.current(), where(i, layer))));
    if (!joins && (in_range || layer.type == config::LayerType::kCustom)) {
      inner[i] = build_one(i, layer, walk.current(), backend, custom_layers, domain);
      inner[i]->set_global_index(static_cast<int>(i));
    }
    walk.next(layer, [&](const std::string&, int64_t) { return inner[i]->out_features(); });
    main_out.push_back(width_of(walk.current(), level_of(domain, walk.current(), where(i, layer))));
  }
  const std::vector<LayerCarry> plan = skip_plan(spec.layers, main_out, first, last);
  std::vector<std::unique_ptr<Layer>> layers;
  for (int i = first; i < last; ++i) {
    const config::LayerSpec& layer = spec.layers[static_cast<size_t>(i)];
    const Join join = layer.type == config::LayerType::kConcat ? Join::kConcat
                      : layer.type == config::LayerType::kAdd  ? Join::kAdd
                                                               : Join::kNone;
    std::unique_ptr<Layer> built = std::move(inner[static_cast<size_t>(i)]);
    if (join != Join::kNone || plan[static_cast<size_t>(i)].carries()) {
      built = std::make_unique<SkipLayer>(backend, std::move(built), join, layer.name, layer.from,
                                          main_in[static_cast<size_t>(i)], main_out[static_cast<size_t>(i)],
                                          plan[static_cast<size_t>(i)]);
    }
    built->set_global_index(i);
    layers.push_back(std::move(built));
  }
  return layers;
}

}  // namespace

std::vector<std::unique_ptr<Layer>> build_layers(const config::ModelSpec& spec, kernels::Backend& backend,
                                                 const CustomLayerRegistry& custom_layers) {
  return build_layers(spec, backend, custom_layers, 0, static_cast<int>(spec.layers.size()),
                      config::input_shape_of(spec));
}

std::vector<std::unique_ptr<Layer>> build_layers(const config::ModelSpec& spec, kernels::Backend& backend,
                                                 const CustomLayerRegistry& custom_layers, int first, int last,
                                                 const config::SampleShape& in_shape) {
  return build_layers(spec, backend, custom_layers, first, last, in_shape, nullptr);
}

std::vector<std::unique_ptr<Layer>> build_layers(const config::ModelSpec& spec, kernels::Backend& backend,
                                                 const CustomLayerRegistry& custom_layers, int first, int last,
                                                 const config::SampleShape& in_shape, FieldDomain* domain) {
  if (first < 0 || first > last || last > static_cast<int>(spec.layers.size())) {
    throw Error(ErrorCode::kInvalidArgument, "build_layers: layers [" + std::to_string(first) + ", " +
                                                 std::to_string(last) + ") of a model of " +
                                                 std::to_string(spec.layers.size()));
  }
  if (config::has_skips(spec.layers)) return build_with_skips(spec, backend, custom_layers, first, last, domain);
  std::vector<std::unique_ptr<Layer>> layers;
  config::SampleShape shape = in_shape;
  for (size_t i = static_cast<size_t>(first); i < static_cast<size_t>(last); ++i) {
    std::unique_ptr<Layer> layer = build_one(i, spec.layers[i], shape, backend, custom_layers, domain);
    layer->set_global_index(static_cast<int>(i));
    // The one shape rule (config::output_shape); a custom layer's width is what the built layer reports.
    shape = config::output_shape(spec.layers[i], shape,
                                 [&](const std::string&, int64_t) { return layer->out_features(); });
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
