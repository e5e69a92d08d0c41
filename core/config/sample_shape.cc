#include "core/config/sample_shape.h"

#include <algorithm>

#include "core/common/error.h"

namespace sluice::config {
namespace {

[[noreturn]] void refuse(const std::string& problem) { throw Error(ErrorCode::kConfig, problem); }

// A custom layer gives rows of the width it was registered with (unknown, -1, without `custom_widths`), or the
// shape its entry declares (`outputs: [..]`), which must then hold that many values.
SampleShape custom_output_shape(const LayerSpec& layer, const SampleShape& in, const CustomWidths& custom_widths) {
  const int64_t width = custom_widths ? custom_widths(layer.name, features_of(in)) : -1;
  if (layer.declared_outputs.empty()) return {width};
  const SampleShape& declared = layer.declared_outputs;
  if (width >= 0 && width != features_of(declared)) {
    refuse("custom layer '" + layer.name + "' declares outputs " + shape_text(declared) + " (" +
           std::to_string(features_of(declared)) + " values) but gives " + std::to_string(width));
  }
  return declared;
}

// reshape: the same elements seen as `layer.shape`, so the counts must agree.
SampleShape reshaped(const LayerSpec& layer, const SampleShape& in) {
  if (features_of(layer.shape) != features_of(in)) {
    refuse("reshape to " + shape_text(layer.shape) + " (" + std::to_string(features_of(layer.shape)) +
           " values per sample) cannot take its input " + shape_text(in) + " (" + std::to_string(features_of(in)) +
           " values)");
  }
  return layer.shape;
}

// `values` given once stand for every one of `dims` spatial dimensions; otherwise there must be one per dimension.
std::vector<int64_t> per_dimension(const char* key, const std::vector<int64_t>& values, size_t dims) {
  if (values.size() == 1) return std::vector<int64_t>(dims, values[0]);
  if (values.size() != dims) {
    refuse(std::string(key) + " has " + std::to_string(values.size()) + " values but the input field has " +
           std::to_string(dims) + " spatial dimension" + (dims == 1 ? "" : "s"));
  }
  return values;
}

void require_field(const LayerSpec& layer, const SampleShape& in) {
  if (!is_field(in)) {
    const std::string& type = layer_type_name(layer.type);
    const bool vowel = std::string("aeiou").find(type[0]) != std::string::npos;
    refuse(std::string(vowel ? "an " : "a ") + type + " layer needs a field [channels, extents..] as its input, " +
           "but gets " + shape_text(in) + " (give model.inputs as a shape such as [2, 64, 64])");
  }
}

// The field shape [channels, extents..].
SampleShape field_shape(int64_t channels, const std::vector<int64_t>& extents) {
  SampleShape shape{channels};
  shape.insert(shape.end(), extents.begin(), extents.end());
  return shape;
}

void require_rows(const LayerSpec& layer, const SampleShape& in) {
  if (is_field(in)) {
    refuse("a " + layer_type_name(layer.type) + " layer takes rows of features, but its input is a field " +
           shape_text(in) + "; put {type: flatten} before it");
  }
}

std::string text_of(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

}  // namespace

int64_t field_channels(const SampleShape& shape) {
  if (!is_field(shape) || features_of(shape) < 0) return -1;
  return shape[0];
}

int64_t field_points(const SampleShape& shape) {
  if (!is_field(shape) || features_of(shape) < 0) return 1;
  return features_of(shape) / shape[0];
}

int64_t features_of(const SampleShape& shape) {
  int64_t features = 1;
  for (int64_t extent : shape) {
    if (extent < 0) return -1;
    features *= extent;
  }
  return features;
}

std::string shape_text(const SampleShape& shape) {
  if (!is_field(shape)) return "rows of " + (shape.empty() ? std::string("?") : std::to_string(shape[0])) + " features";
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

kernels::ConvGeometry conv_geometry(const LayerSpec& layer, const SampleShape& in) {
  if (!is_field(in)) {
    refuse("a conv layer needs a field [channels, extents..] as its input, but gets " + shape_text(in) +
           " (give model.inputs as a shape such as [2, 64, 64])");
  }
  kernels::ConvGeometry g;
  const size_t dims = in.size() - 1;
  g.in_channels = in[0];
  g.out_channels = layer.channels;
  g.groups = layer.groups;
  g.in.assign(in.begin() + 1, in.end());
  g.kernel = per_dimension("kernel", layer.kernel, dims);
  g.stride = per_dimension("stride", layer.stride, dims);
  g.dilation = per_dimension("dilation", layer.dilation, dims);
  g.pad_low.assign(dims, 0);
  g.pad_high.assign(dims, 0);
  if (g.in_channels % g.groups != 0 || g.out_channels % g.groups != 0) {
    refuse("groups " + std::to_string(g.groups) + " must divide both the input channels (" +
           std::to_string(g.in_channels) + ") and the output channels (" + std::to_string(g.out_channels) + ")");
  }
  for (size_t d = 0; d < dims && layer.padding != Padding::kNone; ++d) {
    g.pad_low[d] = kernels::same_pad_low(g.kernel[d], g.dilation[d]);
    g.pad_high[d] = kernels::same_pad_high(g.kernel[d], g.dilation[d]);
    const bool fits = layer.padding == Padding::kPeriodic ? g.pad_high[d] <= g.in[d] : g.pad_high[d] < g.in[d];
    if (layer.padding != Padding::kZeros && !fits) {
      refuse(padding_name(layer.padding) + " padding of " + std::to_string(g.pad_high[d]) +
             " (kernel " + std::to_string(g.kernel[d]) + ", dilation " + std::to_string(g.dilation[d]) +
             ") is wider than spatial extent " + std::to_string(g.in[d]) + " of the input " + shape_text(in));
    }
  }
  try {
    kernels::complete_conv_geometry(g);
  } catch (const Error& e) {
    refuse(std::string(e.what()) + " (input " + shape_text(in) + ")");
  }
  return g;
}

kernels::NormGeometry norm_geometry(const LayerSpec& layer, const SampleShape& in) {
  if (!is_field(in)) {
    const std::string& type = layer_type_name(layer.type);
    refuse((type[0] == 'i' ? "an " : "a ") + type + " layer needs a field [channels, extents..] as its input, but gets " +
           shape_text(in) + (layer.type == LayerType::kLayerNorm ? "" : "; on rows of features use {type: layernorm}"));
  }
  kernels::NormGeometry g;
  g.channels = in[0];
  g.points = features_of(in) / in[0];
  g.eps = static_cast<float>(layer.eps);
  if (layer.type == LayerType::kGroupNorm) g.groups = layer.groups;
  if (layer.type == LayerType::kInstanceNorm) g.groups = g.channels;
  if (g.channels % g.groups != 0) {
    refuse("groups " + std::to_string(g.groups) + " must divide the input channels (" + std::to_string(g.channels) +
           ") of " + shape_text(in));
  }
  return g;
}

kernels::PoolGeometry pool_geometry(const LayerSpec& layer, const SampleShape& in) {
  require_field(layer, in);
  kernels::PoolGeometry g;
  g.mode = layer.mode == "avg" ? kernels::PoolMode::kAvg : kernels::PoolMode::kMax;
  g.channels = in[0];
  g.in.assign(in.begin() + 1, in.end());
  g.kernel = per_dimension("kernel", layer.kernel, g.in.size());
  for (size_t d = 0; d < g.in.size(); ++d) {
    if (g.in[d] % g.kernel[d] != 0) {
      refuse("spatial extent " + std::to_string(g.in[d]) + " (dimension " + std::to_string(d + 1) + " of the input " +
             shape_text(in) + ") is not a multiple of the pool kernel " + std::to_string(g.kernel[d]) +
             " (the stride is the kernel, and no padding is added)");
    }
  }
  return g;
}

kernels::ResampleGeometry resample_geometry(const LayerSpec& layer, const SampleShape& in) {
  require_field(layer, in);
  kernels::ResampleGeometry g;
  g.mode = layer.mode == "linear" ? kernels::ResampleMode::kLinear : kernels::ResampleMode::kNearest;
  g.channels = in[0];
  g.in.assign(in.begin() + 1, in.end());
  g.factor = per_dimension("factor", layer.factor, g.in.size());
  return g;
}

kernels::DeconvGeometry deconv_geometry(const LayerSpec& layer, const SampleShape& in) {
  require_field(layer, in);
  kernels::DeconvGeometry g;
  g.in_channels = in[0];
  g.out_channels = layer.channels;
  g.in.assign(in.begin() + 1, in.end());
  g.kernel = per_dimension("kernel", layer.kernel, g.in.size());
  g.stride = per_dimension("stride", layer.stride, g.in.size());
  return g;
}

kernels::SpectralGeometry spectral_geometry(const LayerSpec& layer, const SampleShape& in) {
  require_field(layer, in);
  const std::string& type = layer_type_name(layer.type);
  kernels::SpectralGeometry g;
  g.in_channels = in[0];
  g.out_channels = layer.channels;
  g.extents.assign(in.begin() + 1, in.end());
  g.modes = layer.modes;
  const size_t dims = g.extents.size();
  if (g.modes.size() != dims) {
    refuse(type + " modes has " + std::to_string(g.modes.size()) + " values but the input field " + shape_text(in) +
           " has " + std::to_string(dims) + " spatial dimension" + (dims == 1 ? "" : "s") + " (one value each)");
  }
  for (size_t d = 0; d < dims; ++d) {
    const bool last = d + 1 == dims;
    const int64_t n = g.extents[d], m = g.modes[d];
    if (last ? m > n / 2 + 1 : 2 * m > n) {
      refuse(type + " modes " + std::to_string(m) + " do not fit spatial extent " + std::to_string(n) +
             " (dimension " + std::to_string(d + 1) + " of the input " + shape_text(in) + "): " +
             (last ? "the last dimension keeps modes 0..m-1 of its n/2 + 1, so m <= " + std::to_string(n / 2 + 1)
                   : "a non-last dimension keeps modes -m..m-1, so 2·m <= n, m <= " + std::to_string(n / 2)));
    }
  }
  return g;
}

namespace {

// spectral_conv and fno_block: [channels, the same extents].
SampleShape spectral_output_shape(const LayerSpec& layer, const SampleShape& in) {
  if (layer.type != LayerType::kSpectralConv && layer.type != LayerType::kFnoBlock) {
    throw Error(ErrorCode::kInternal, "layer type " + std::to_string(static_cast<int>(layer.type)) + " is unknown");
  }
  const kernels::SpectralGeometry g = spectral_geometry(layer, in);
  return field_shape(g.out_channels, g.extents);
}

}  // namespace

kernels::ConvGeometry patch_embed_geometry(const LayerSpec& layer, const SampleShape& in) {
  require_field(layer, in);
  kernels::ConvGeometry g;
  const size_t dims = in.size() - 1;
  g.in_channels = in[0];
  g.out_channels = layer.dim;
  g.in.assign(in.begin() + 1, in.end());
  g.kernel = per_dimension("patch", layer.patch, dims);
  g.stride = g.kernel;
  g.dilation.assign(dims, 1);
  g.pad_low.assign(dims, 0);
  g.pad_high.assign(dims, 0);
  for (size_t d = 0; d < dims; ++d) {
    if (g.in[d] % g.kernel[d] != 0) {
      refuse("patch " + std::to_string(g.kernel[d]) + " does not divide spatial extent " + std::to_string(g.in[d]) +
             " (dimension " + std::to_string(d + 1) + " of the input " + shape_text(in) + ")");
    }
  }
  kernels::complete_conv_geometry(g);
  return g;
}

void require_tokens(const LayerSpec& layer, const SampleShape& in) {
  if (in.size() != 2) {
    refuse("a " + layer_type_name(layer.type) + " layer takes tokens [D, T] (a patch_embed's output), but gets " +
           shape_text(in));
  }
  if (layer.type == LayerType::kTransformer && in[0] % layer.heads != 0) {
    refuse("heads " + std::to_string(layer.heads) + " do not divide the token dimension " + std::to_string(in[0]) +
           " of the input " + shape_text(in));
  }
}

namespace {

int64_t product_of(const std::vector<int64_t>& values) {
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  return product;
}

}  // namespace

SampleShape unpatch_shape(const LayerSpec& layer, const SampleShape& in) {
  require_tokens(layer, in);
  const std::vector<int64_t> patch = per_dimension("patch", layer.patch, layer.grid.size());
  if (product_of(layer.grid) != in[1]) {
    refuse("grid " + text_of(layer.grid) + " has " + std::to_string(product_of(layer.grid)) +
           " tokens but the input " + shape_text(in) + " has " + std::to_string(in[1]));
  }
  if (layer.channels * product_of(patch) != in[0]) {
    refuse("channels " + std::to_string(layer.channels) + " x patch " + text_of(patch) + " is " +
           std::to_string(layer.channels * product_of(patch)) + " features per token, but the input " +
           shape_text(in) + " has " + std::to_string(in[0]));
  }
  SampleShape out{layer.channels};
  for (size_t d = 0; d < patch.size(); ++d) out.push_back(layer.grid[d] * patch[d]);
  return out;
}

// Output element (c, x1, ..) with x_i = g_i · p_i + q_i comes from token (g1, ..) (row-major over the grid),
// feature (q1, .., c) (row-major over the patch, then the channel).
std::vector<int64_t> unpatch_source(const LayerSpec& layer, const SampleShape& in) {
  const SampleShape out = unpatch_shape(layer, in);
  const std::vector<int64_t> patch = per_dimension("patch", layer.patch, layer.grid.size());
  const size_t dims = patch.size();
  const int64_t channels = layer.channels, tokens = in[1];
  std::vector<int64_t> source(static_cast<size_t>(features_of(out)));
  std::vector<int64_t> position(dims, 0);  // the output point, row-major
  const int64_t points = features_of(out) / channels;
  for (int64_t point = 0; point < points; ++point) {
    int64_t rest = point;
    for (size_t d = dims; d-- > 0;) {
      position[d] = rest % out[d + 1];
      rest /= out[d + 1];
    }
    int64_t token = 0, feature = 0;
    for (size_t d = 0; d < dims; ++d) {
      token = token * layer.grid[d] + position[d] / patch[d];
      feature = feature * patch[d] + position[d] % patch[d];
    }
    for (int64_t c = 0; c < channels; ++c) {
      source[static_cast<size_t>(c * points + point)] = (feature * channels + c) * tokens + token;
    }
  }
  return source;
}

namespace {

// patch_embed, transformer, unpatch (is_token_layer).
SampleShape token_output_shape(const LayerSpec& layer, const SampleShape& in) {
  if (layer.type == LayerType::kPatchEmbed) {
    const kernels::ConvGeometry g = patch_embed_geometry(layer, in);
    return {g.out_channels, g.out_features() / g.out_channels};
  }
  if (layer.type == LayerType::kUnpatch) return unpatch_shape(layer, in);
  require_tokens(layer, in);
  return in;
}

}  // namespace

SampleShape output_shape(const LayerSpec& layer, const SampleShape& in, const CustomWidths& custom_widths) {
  if (is_token_layer(layer.type)) return token_output_shape(layer, in);
  switch (layer.type) {
    case LayerType::kLinear:
      require_rows(layer, in);
      return {layer.outputs};
    case LayerType::kResidualMlp:
      require_rows(layer, in);
      return in;
    case LayerType::kLayerNorm: return in;  // rows: over the features; a field: over the channels at each point
    case LayerType::kGroupNorm:
    case LayerType::kInstanceNorm:
      norm_geometry(layer, in);
      return in;
    case LayerType::kCustom: return custom_output_shape(layer, in, custom_widths);
    case LayerType::kRelu:
    case LayerType::kGelu:
    case LayerType::kTanh:
    case LayerType::kDropout: return in;
    case LayerType::kFlatten: return {features_of(in)};
    case LayerType::kReshape: return reshaped(layer, in);
    case LayerType::kConcat:
    case LayerType::kAdd:
      throw Error(ErrorCode::kInternal, "the shape of a " + layer_type_name(layer.type) + " needs a ShapeWalk");
    case LayerType::kConv: {
      const kernels::ConvGeometry g = conv_geometry(layer, in);
      SampleShape out{g.out_channels};
      out.insert(out.end(), g.out.begin(), g.out.end());
      return out;
    }
    case LayerType::kConvTranspose: {
      const kernels::DeconvGeometry g = deconv_geometry(layer, in);
      return field_shape(g.out_channels, g.out());
    }
    case LayerType::kPool: {
      const kernels::PoolGeometry g = pool_geometry(layer, in);
      return field_shape(g.channels, g.out());
    }
    case LayerType::kUpsample: {
      const kernels::ResampleGeometry g = resample_geometry(layer, in);
      return field_shape(g.channels, g.out());
    }
    default: return spectral_output_shape(layer, in);  // spectral_conv, fno_block (kept out of this switch's count)
  }
  throw Error(ErrorCode::kInternal, "layer type " + std::to_string(static_cast<int>(layer.type)) + " is unknown");
}

namespace {

// concat appends `skip`'s channels (or features) after the current tensor's; add sums two tensors of one shape.
SampleShape joined(const LayerSpec& layer, const SampleShape& current, const SampleShape& skip) {
  const bool same_extents = current.size() == skip.size() && std::equal(current.begin() + 1, current.end(),
                                                                         skip.begin() + 1);
  if (layer.type == LayerType::kAdd) {
    if (current != skip) {
      refuse("add needs the same shape on both sides, but the current tensor is " + shape_text(current) +
             " and '" + layer.from + "' gives " + shape_text(skip));
    }
    return current;
  }
  if (!same_extents || current[0] < 0 || skip[0] < 0) {
    refuse("concat joins tensors along the channels (or features), so the rest must agree, but the current tensor "
           "is " + shape_text(current) + " and '" + layer.from + "' gives " + shape_text(skip));
  }
  SampleShape out = current;
  out[0] += skip[0];
  return out;
}

}  // namespace

const SampleShape& ShapeWalk::next(const LayerSpec& layer, const CustomWidths& custom_widths) {
  if (layer.type == LayerType::kConcat || layer.type == LayerType::kAdd) {
    const auto found = std::find_if(named_.begin(), named_.end(), [&](const auto& n) { return n.first == layer.from; });
    if (found == named_.end()) {
      refuse(layer_type_name(layer.type) + " reads from '" + layer.from + "', but no earlier layer has that name");
    }
    current_ = joined(layer, current_, found->second);
  } else {
    current_ = output_shape(layer, current_, custom_widths);
  }
  if (!layer.name.empty() && layer.type != LayerType::kCustom) {
    for (const auto& n : named_) {
      if (n.first == layer.name) refuse("the name '" + layer.name + "' is already used by an earlier layer");
    }
    named_.emplace_back(layer.name, current_);
  }
  return current_;
}

SampleShape output_shape(const std::vector<LayerSpec>& layers, const SampleShape& in,
                         const CustomWidths& custom_widths) {
  ShapeWalk walk(in);
  for (const LayerSpec& layer : layers) walk.next(layer, custom_widths);
  return walk.current();
}

bool has_skips(const std::vector<LayerSpec>& layers) {
  return std::any_of(layers.begin(), layers.end(), [](const LayerSpec& layer) {
    return layer.type == LayerType::kConcat || layer.type == LayerType::kAdd;
  });
}

int64_t output_width(const LayerSpec& layer, int64_t in, const CustomWidths& custom_widths) {
  return features_of(output_shape(layer, SampleShape{in}, custom_widths));
}

int64_t output_width(const std::vector<LayerSpec>& layers, int64_t inputs, const CustomWidths& custom_widths) {
  return features_of(output_shape(layers, SampleShape{inputs}, custom_widths));
}

}  // namespace sluice::config
