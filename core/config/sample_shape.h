// What each sample looks like between layers, and the one rule for what shape a layer gives. A sample is either a
// row of features ({F}) or a field: channels, then 1 to 3 spatial extents ({C, D1[, D2[, D3]]}), C order, the last
// extent varying fastest (PyTorch's N·C·D·H·W without N). Both are stored as [samples][features] tensors; the shape
// is what the layers read the features as.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/config/layer_spec.h"
#include "kernels/conv_geometry.h"
#include "kernels/norm_geometry.h"
#include "kernels/spectral_geometry.h"

namespace sluice::config {

using SampleShape = std::vector<int64_t>;

inline bool is_field(const SampleShape& shape) { return shape.size() >= 2; }
// A field's channel count C; -1 for rows or an unknown (negative) extent.
int64_t field_channels(const SampleShape& shape);
// A field's points per channel ΠD; 1 for rows or an unknown (negative) extent.
int64_t field_points(const SampleShape& shape);
// C·ΠD (or F); -1 when any extent is unknown (negative).
int64_t features_of(const SampleShape& shape);
// "[3, 64, 64]" or, for rows, "rows of 12 features".
std::string shape_text(const SampleShape& shape);

// How wide a custom layer's output is, given the name it was registered under and its input width. It may
// throw (an unregistered name) or answer a negative width for "unknown".
using CustomWidths = std::function<int64_t(const std::string& name, int64_t in_features)>;

// The shape `layer` gives for input shape `in` (not for concat and add: they need a ShapeWalk). Throws Error(kConfig) with the problem alone (the caller names
// where the layer is) when the layer cannot take that input: a conv on rows, a kernel that does not fit, a linear
// layer on a field (flatten first). A custom layer gives rows of what `custom_widths` answers (unknown, -1, when it is
// empty); unknown stays unknown through the layers that keep their input's shape.
SampleShape output_shape(const LayerSpec& layer, const SampleShape& in, const CustomWidths& custom_widths = {});
// The shapes through a layer list in order, with its skip connections: a concat or add joins the current tensor
// with the output of the earlier layer named by its `from`. next() throws Error(kConfig) with the problem (a name
// used twice, a `from` that names no earlier layer, shapes a concat or add cannot join) as output_shape does.
class ShapeWalk {
 public:
  explicit ShapeWalk(SampleShape input) : current_(std::move(input)) {}
  const SampleShape& next(const LayerSpec& layer, const CustomWidths& custom_widths = {});
  const SampleShape& current() const { return current_; }

 private:
  SampleShape current_;
  std::vector<std::pair<std::string, SampleShape>> named_;  // layer names and their outputs, in order
};

// The output shape of a whole layer list taking `in` (a ShapeWalk over it).
SampleShape output_shape(const std::vector<LayerSpec>& layers, const SampleShape& in,
                         const CustomWidths& custom_widths = {});

// Whether any layer is a concat or add (reads a skip; core/model/skip_plan.h carries them).
bool has_skips(const std::vector<LayerSpec>& layers);

// Rows in, rows out: features_of(output_shape(layer, {in})).
int64_t output_width(const LayerSpec& layer, int64_t in, const CustomWidths& custom_widths = {});
int64_t output_width(const std::vector<LayerSpec>& layers, int64_t inputs, const CustomWidths& custom_widths = {});

// A conv layer's geometry on input field `in` (the kernel, stride and dilation given once stand for every spatial
// dimension; padding other than none keeps the size at stride 1, the extra one of an even kernel on the high side).
// Throws Error(kConfig) with the problem, as output_shape does.
kernels::ConvGeometry conv_geometry(const LayerSpec& layer, const SampleShape& in);

// A group_norm, instance_norm (groups = channels) or layernorm layer's geometry on input field `in` (layernorm:
// statistics over the channels at each point; groups 1). Throws Error(kConfig) with the problem, as output_shape
// does: rows in (group_norm, instance_norm), groups not dividing the channels.
kernels::NormGeometry norm_geometry(const LayerSpec& layer, const SampleShape& in);
// A pool layer's geometry on input field `in`: stride = kernel, so every spatial extent must be a multiple of its
// kernel (refused otherwise, naming the extent and the kernel).
kernels::PoolGeometry pool_geometry(const LayerSpec& layer, const SampleShape& in);
// An upsample layer's geometry on input field `in` (output extents in · factor).
kernels::ResampleGeometry resample_geometry(const LayerSpec& layer, const SampleShape& in);
// A conv_transpose layer's geometry on input field `in` (output extents (n − 1) · stride + kernel, PyTorch's).
kernels::DeconvGeometry deconv_geometry(const LayerSpec& layer, const SampleShape& in);
// A spectral_conv or fno_block layer's geometry on input field `in` (output [channels, same extents]). Throws
// Error(kConfig) naming the layer type when the input is not a field, when `modes` has not one value per spatial
// dimension, or when the modes do not fit the extents (2·m <= n in a non-last dimension, m <= n/2 + 1 in the last).
kernels::SpectralGeometry spectral_geometry(const LayerSpec& layer, const SampleShape& in);

// Tokens [D, T] (core/model/transformer_layer.h). patch_embed's convolution on input field `in`: kernel = stride =
// `patch`, D output channels; refused (Error(kConfig)) when a patch extent does not divide its spatial extent.
kernels::ConvGeometry patch_embed_geometry(const LayerSpec& layer, const SampleShape& in);
// The tokens [D, T] a transformer or unpatch layer takes; refused when `in` is not a field of one spatial extent,
// or (transformer) when its heads do not divide D.
void require_tokens(const LayerSpec& layer, const SampleShape& in);
// unpatch on tokens `in`: the output field [C, g1·p1, ..]; refused unless Π grid = T and D = C · Π patch.
SampleShape unpatch_shape(const LayerSpec& layer, const SampleShape& in);
// unpatch's gather: output column j of a sample reads its input column source[j] (each token's D features read as
// (p1, .., c), channels fastest).
std::vector<int64_t> unpatch_source(const LayerSpec& layer, const SampleShape& in);

}  // namespace sluice::config
