#include "core/config/domain_layout.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "core/common/error.h"

namespace sluice::config {

namespace {

// The default tile leaves at least this many tiles along a dimension where the extent allows: even splits into
// 2, 4 and 8 blocks of a power-of-two extent then fall on tile edges, while each tile keeps 1/8 of the extent's
// points for the partial sums formed over it.
constexpr int64_t kDefaultTilesPerDimension = 8;

[[noreturn]] void config_fail(const std::string& problem) { throw Error(ErrorCode::kConfig, "config: " + problem); }

std::string list_text(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

// Dimension d as messages name it: 1-based, as in model.inputs' extents after the channels.
std::string dimension_text(size_t d) { return "spatial dimension " + std::to_string(d + 1); }

void multiply(Scale& scale, size_t d, int64_t num, int64_t den) {
  scale.num[d] *= num;
  scale.den[d] *= den;
  const int64_t g = std::gcd(scale.num[d], scale.den[d]);
  scale.num[d] /= g;
  scale.den[d] /= g;
}

// The layer's halo and scale change on its input `in`; `problem` when it cannot run on a block.
void describe_split(const LayerSpec& layer, SplitLayer& s) {
  const size_t dims = s.in.size() - 1;
  s.halo_low.assign(dims, 0);
  s.halo_high.assign(dims, 0);
  s.dy_halo_low.assign(dims, 0);
  s.dy_halo_high.assign(dims, 0);
  s.out_scale = s.in_scale;
  if (!runs_split(layer.type)) {
    s.problem = "a " + layer_type_name(layer.type) + " layer needs the whole sample and cannot run on a block of a "
                "split field (the layer table marks it so; core/config/layer_spec.cc)";
    return;
  }
  if (layer.type == LayerType::kConv) {
    const kernels::ConvGeometry g = conv_geometry(layer, s.in);
    s.closed_edges = layer.padding == Padding::kZeros || layer.padding == Padding::kReflect;
    for (size_t d = 0; d < dims; ++d) {
      if (layer.padding == Padding::kNone && g.dilation[d] * (g.kernel[d] - 1) > 0) {
        s.problem = "padding none shrinks the field by dilation·(kernel − 1) = " +
                    std::to_string(g.dilation[d] * (g.kernel[d] - 1)) + " points in " + dimension_text(d) +
                    ", so blocks cannot tile its output; use padding zeros, periodic or reflect";
        return;
      }
      s.halo_low[d] = g.pad_low[d];
      s.halo_high[d] = g.pad_high[d];
      // dx in gather form reads dy mirrored: pad_high below, pad_low above (docs/DOMAIN.md, tiles section)
      s.dy_halo_low[d] = g.pad_high[d];
      s.dy_halo_high[d] = g.pad_low[d];
      multiply(s.out_scale, d, g.stride[d], 1);
    }
  } else if (layer.type == LayerType::kPool) {
    const kernels::PoolGeometry g = pool_geometry(layer, s.in);
    for (size_t d = 0; d < dims; ++d) multiply(s.out_scale, d, g.kernel[d], 1);
  } else if (layer.type == LayerType::kUpsample) {
    const kernels::ResampleGeometry g = resample_geometry(layer, s.in);
    for (size_t d = 0; d < dims; ++d) {
      multiply(s.out_scale, d, 1, g.factor[d]);
      // linear interpolation reads each output point's two nearest input points: one beyond each block edge
      // and its input gradient gathers from `factor` output points beyond each edge
      if (g.mode == kernels::ResampleMode::kLinear && g.factor[d] > 1) {
        s.halo_low[d] = s.halo_high[d] = 1;
        s.dy_halo_low[d] = s.dy_halo_high[d] = g.factor[d];
      }
    }
  } else if (layer.type == LayerType::kConvTranspose) {
    const kernels::DeconvGeometry g = deconv_geometry(layer, s.in);
    for (size_t d = 0; d < dims; ++d) {
      if (g.kernel[d] != g.stride[d]) {
        s.problem = "kernel " + std::to_string(g.kernel[d]) + " is not its stride " + std::to_string(g.stride[d]) +
                    " in " + dimension_text(d) + ": its outputs overlap or leave gaps across block edges (not built "
                    "yet); use kernel = stride";
        return;
      }
      multiply(s.out_scale, d, 1, g.stride[d]);
    }
  }
}

}  // namespace

int64_t domain_block_count(const std::vector<int>& blocks) {
  int64_t count = 1;
  for (int b : blocks) count *= b;
  return count;
}

std::vector<int> DomainLayout::coords_of(int64_t block) const {
  std::vector<int> coords(blocks.size(), 0);
  for (size_t d = blocks.size(); d-- > 0;) {
    coords[d] = static_cast<int>(block % blocks[d]);
    block /= blocks[d];
  }
  return coords;
}

int64_t DomainLayout::block_at(const std::vector<int>& coords) const {
  int64_t block = 0;
  for (size_t d = 0; d < blocks.size(); ++d) block = block * blocks[d] + coords[d];
  return block;
}

DomainBox DomainLayout::box(int64_t block) const {
  const std::vector<int> coords = coords_of(block);
  DomainBox box;
  for (size_t d = 0; d < blocks.size(); ++d) {
    box.offset.push_back(cuts[d][coords[d]]);
    box.extent.push_back(cuts[d][coords[d] + 1] - cuts[d][coords[d]]);
  }
  return box;
}

// Every cut a multiple of the tile (a block is a union of whole tiles).
void check_domain_tiles(const DomainLayout& layout) {
  for (size_t d = 0; d < layout.cuts.size(); ++d) {
    for (size_t i = 0; i + 1 < layout.cuts[d].size(); ++i) {
      const int64_t begin = layout.cuts[d][i], end = layout.cuts[d][i + 1];
      if (begin % layout.tile[d] == 0 && end % layout.tile[d] == 0) continue;
      config_fail("pipeline.domain_tile " + list_text(layout.tile) + ": in " + dimension_text(d) + " block " +
                  std::to_string(i) + " of " + std::to_string(layout.blocks[d]) + " spans points [" +
                  std::to_string(begin) + ", " + std::to_string(end) + "), not whole tiles of " +
                  std::to_string(layout.tile[d]) + " (every block offset and extent must be a multiple of the tile)");
    }
  }
}

namespace {

void check_layout_sizes(const std::vector<int64_t>& global, const std::vector<int>& blocks,
                        const std::vector<int64_t>& tile) {
  if (blocks.size() != global.size() || tile.size() != global.size()) {
    throw Error(ErrorCode::kInvalidArgument, "domain layout: " + std::to_string(global.size()) +
                                                 " spatial extents, " + std::to_string(blocks.size()) +
                                                 " block counts and " + std::to_string(tile.size()) +
                                                 " tile extents (one each per spatial dimension)");
  }
  for (size_t d = 0; d < global.size(); ++d) {
    if (blocks[d] < 1 || tile[d] < 1) {
      throw Error(ErrorCode::kInvalidArgument, "domain layout: " + dimension_text(d) + " has " +
                                                   std::to_string(blocks[d]) + " blocks and tile " +
                                                   std::to_string(tile[d]) + " (both must be positive)");
    }
  }
}

}  // namespace

DomainLayout even_domain_layout(const std::vector<int64_t>& global, const std::vector<int>& blocks,
                                const std::vector<int64_t>& tile) {
  check_layout_sizes(global, blocks, tile);
  DomainLayout layout{global, blocks, tile, {}};
  for (size_t d = 0; d < global.size(); ++d) {
    if (blocks[d] > global[d]) {
      config_fail("pipeline.domain " + std::to_string(blocks[d]) + " blocks in " + dimension_text(d) +
                  " but the field has " + std::to_string(global[d]) + " points there");
    }
    std::vector<int64_t> cuts = {0};
    for (int i = 0; i < blocks[d]; ++i) {
      cuts.push_back(cuts.back() + global[d] / blocks[d] + (i < global[d] % blocks[d] ? 1 : 0));
    }
    layout.cuts.push_back(cuts);
  }
  return layout;
}

DomainLayout declared_domain_layout(const std::vector<int64_t>& global, const std::vector<int>& blocks,
                                    const std::vector<int64_t>& tile, const std::vector<DomainBox>& declared) {
  check_layout_sizes(global, blocks, tile);
  DomainLayout layout{global, blocks, tile, std::vector<std::vector<int64_t>>(global.size(), {0})};
  if (static_cast<int64_t>(declared.size()) != layout.block_count()) {
    throw Error(ErrorCode::kInvalidArgument, "domain layout: " + std::to_string(declared.size()) +
                                                 " blocks declared for a grid of " +
                                                 std::to_string(layout.block_count()));
  }
  auto refuse = [&](size_t block, size_t d, const std::string& problem) {
    throw Error(ErrorCode::kInvalidArgument, "domain layout: block " + std::to_string(block) + " (offset " +
                                                 list_text(declared[block].offset) + ", extent " +
                                                 list_text(declared[block].extent) + ") in " + dimension_text(d) +
                                                 ": " + problem);
  };
  for (size_t b = 0; b < declared.size(); ++b) {
    const std::vector<int> coords = layout.coords_of(static_cast<int64_t>(b));
    for (size_t d = 0; d < global.size(); ++d) {
      if (declared[b].offset.size() != global.size() || declared[b].extent.size() != global.size())
        refuse(b, d, "expected one offset and one extent per spatial dimension");
      std::vector<int64_t>& cuts = layout.cuts[d];
      const int64_t offset = declared[b].offset[d], end = offset + declared[b].extent[d];
      if (declared[b].extent[d] < 1) refuse(b, d, "the extent must be positive");
      if (static_cast<int>(cuts.size()) == coords[d] + 1) {  // the first block of this grid column
        if (offset != cuts.back()) refuse(b, d, "expected offset " + std::to_string(cuts.back()) + " (blocks tile "
                                                "the field in order, without gaps or overlaps)");
        cuts.push_back(end);
      } else if (offset != cuts[coords[d]] || end != cuts[coords[d] + 1]) {
        refuse(b, d, "the blocks of a grid row must share their offset and extent there (expected points [" +
                         std::to_string(cuts[coords[d]]) + ", " + std::to_string(cuts[coords[d] + 1]) + "))");
      }
      if (coords[d] + 1 == blocks[d] && end != global[d])
        refuse(b, d, "the last block must end at the field's extent " + std::to_string(global[d]));
    }
  }
  return layout;
}

std::vector<SplitLayer> split_layers(const std::vector<LayerSpec>& layers, const SampleShape& input) {
  std::vector<SplitLayer> walked;
  if (!is_field(input)) return walked;
  const size_t dims = input.size() - 1;
  ShapeWalk walk(input);
  Scale scale{std::vector<int64_t>(dims, 1), std::vector<int64_t>(dims, 1)};
  for (const LayerSpec& layer : layers) {
    SplitLayer s;
    s.in = walk.current();
    s.in_scale = scale;
    describe_split(layer, s);
    walked.push_back(s);
    if (!s.problem.empty()) break;
    walked.back().out = walk.next(layer);
    scale = s.out_scale;
  }
  return walked;
}

std::string layer_label(int index, const LayerSpec& layer) {
  return "layer " + std::to_string(index) + " (" + layer_type_name(layer.type) +
         (layer.name.empty() ? "" : " \"" + layer.name + "\"") + ")";
}

namespace {

// Per dimension, the least common multiple of the downsampling factors (numerators) of the layers that split.
std::vector<int64_t> model_downsampling(const std::vector<SplitLayer>& walked, size_t dims) {
  std::vector<int64_t> factor(dims, 1);
  for (const SplitLayer& s : walked) {
    if (!s.problem.empty()) break;
    for (size_t d = 0; d < dims; ++d) factor[d] = std::lcm(factor[d], s.out_scale.num[d]);
  }
  return factor;
}

}  // namespace

std::vector<int64_t> default_domain_tile(const std::vector<LayerSpec>& layers, const SampleShape& input) {
  if (!is_field(input)) return {};
  const size_t dims = input.size() - 1;
  const std::vector<int64_t> factor = model_downsampling(split_layers(layers, input), dims);
  std::vector<int64_t> tile;
  for (size_t d = 0; d < dims; ++d) {
    const int64_t extent = input[d + 1];
    const int64_t limit = std::max(factor[d], extent / kDefaultTilesPerDimension);
    int64_t chosen = extent;  // no multiple of the downsampling divides the extent: the field is one tile wide
    bool found = false;
    // the divisors in pairs (i, extent / i): O(sqrt(extent)) whatever the extent
    for (int64_t i = 1; i * i <= extent; ++i) {
      if (extent % i != 0) continue;
      for (const int64_t t : {i, extent / i}) {
        if (t <= limit && t % factor[d] == 0 && (!found || t > chosen)) {
          chosen = t;
          found = true;
        }
      }
    }
    tile.push_back(chosen);
  }
  return tile;
}

namespace {

// A reflect-padded conv folds the reflected points' gradients back inside each tile on the field's edge
// (kernels/tiled_conv_reflect.cc), so its tile, at its input's level, must be wider than its halo.
std::string reflect_tile_problem(const LayerSpec& layer, const SplitLayer& s, const std::vector<int64_t>& tile) {
  if (layer.type != LayerType::kConv || layer.padding != Padding::kReflect) return "";
  for (size_t d = 0; d < tile.size(); ++d) {
    const int64_t at = tile[d] * s.in_scale.den[d] / s.in_scale.num[d];
    const int64_t halo = std::max(s.halo_low[d], s.halo_high[d]);
    if (halo > 0 && at < halo + 1) {
      return "tile " + std::to_string(tile[d]) + " in " + dimension_text(d) + " is " + std::to_string(at) +
             " points at the input of a reflect-padded conv whose halo there is " + std::to_string(halo) +
             " (padding reflect on a split field needs tiles wider than the halo)";
    }
  }
  return "";
}

}  // namespace

std::string domain_tile_problem(const std::vector<LayerSpec>& layers, const SampleShape& input,
                                const std::vector<int64_t>& tile) {
  const size_t dims = input.size() - 1;
  if (tile.size() != dims) {
    return "expected one tile extent per spatial dimension of model.inputs (" + std::to_string(dims) + "), got " +
           std::to_string(tile.size());
  }
  for (size_t d = 0; d < dims; ++d) {
    if (tile[d] < 1 || input[d + 1] % tile[d] != 0) {
      return "tile " + std::to_string(tile[d]) + " in " + dimension_text(d) + " does not divide the field's extent " +
             std::to_string(input[d + 1]) + " there";
    }
  }
  const std::vector<SplitLayer> walked = split_layers(layers, input);
  for (size_t i = 0; i < walked.size() && walked[i].problem.empty(); ++i) {
    for (size_t d = 0; d < dims; ++d) {
      const int64_t f = walked[i].out_scale.num[d];
      if (tile[d] % f == 0) continue;
      return "tile " + std::to_string(tile[d]) + " in " + dimension_text(d) + " is not whole at " +
             layer_label(static_cast<int>(i), layers[i]) + ", whose output the model has downsampled by " +
             std::to_string(f) + " there (the tile must be a multiple of " + std::to_string(f) + ")";
    }
    const std::string narrow = reflect_tile_problem(layers[i], walked[i], tile);
    if (!narrow.empty()) return narrow + " at " + layer_label(static_cast<int>(i), layers[i]);
  }
  return "";
}

namespace {

// Block cuts at the layer's output resolution must be whole points: multiples of the cumulative factor.
void check_cuts_at_layer(const DomainLayout& layout, const SplitLayer& s, const std::string& label) {
  for (size_t d = 0; d < layout.cuts.size(); ++d) {
    const int64_t f = s.out_scale.num[d];
    for (size_t i = 0; i + 1 < layout.cuts[d].size(); ++i) {
      const int64_t begin = layout.cuts[d][i], end = layout.cuts[d][i + 1];
      if (begin % f == 0 && end % f == 0) continue;
      config_fail(label + " downsamples " + dimension_text(d) + " by a cumulative factor " + std::to_string(f) +
                  " (from the model's input to its output), but there block " + std::to_string(i) + " of " +
                  std::to_string(layout.blocks[d]) + " spans input points [" + std::to_string(begin) + ", " +
                  std::to_string(end) + ") (offset " + std::to_string(begin) + ", extent " +
                  std::to_string(end - begin) + "): every block offset and extent must be a multiple of " +
                  std::to_string(f));
    }
  }
}

// A block's extents at the layer's input resolution (cuts already checked to be whole there).
std::vector<int64_t> extents_at(const DomainBox& box, const Scale& scale) {
  std::vector<int64_t> extents;
  for (size_t d = 0; d < box.extent.size(); ++d) extents.push_back(box.extent[d] * scale.den[d] / scale.num[d]);
  return extents;
}

// What one pass exchanges: the forward's halo of the input, or the backward's of the output gradient.
struct PassHalo {
  const std::vector<int64_t>& low;
  const std::vector<int64_t>& high;
  const Scale& scale;
  int64_t channels;
  const char* what;  // for messages
};

PassHalo pass_halo(const SplitLayer& s, HaloPass pass) {
  if (pass == HaloPass::kForward) return {s.halo_low, s.halo_high, s.in_scale, field_channels(s.in), "input"};
  return {s.dy_halo_low, s.dy_halo_high, s.out_scale, field_channels(s.out), "output gradient"};
}

// A block must hold at least the halo its neighbours read from it (no halo reaches past the next block).
void check_halo_fits(const DomainLayout& layout, const SplitLayer& s, const std::string& label) {
  for (const HaloPass pass : {HaloPass::kForward, HaloPass::kBackward}) {
    const PassHalo h = pass_halo(s, pass);
    for (int64_t b = 0; b < layout.block_count(); ++b) {
      const std::vector<int64_t> extents = extents_at(layout.box(b), h.scale);
      for (size_t d = 0; d < extents.size(); ++d) {
        const int64_t halo = std::max(h.low[d], h.high[d]);
        if (layout.blocks[d] == 1 || extents[d] >= halo) continue;
        config_fail(label + " reads a halo of " + std::to_string(halo) + " points of its " + h.what + " in " +
                    dimension_text(d) + ", but block " + std::to_string(b) + " is only " +
                    std::to_string(extents[d]) + " points wide there: use fewer blocks in that dimension");
      }
    }
  }
}

// Whether one step from `coord` (-1 or +1) along a dimension of `blocks` crosses the field's edge into a halo the
// block makes itself (zeros or its own points reflected).
bool into_closed(const SplitLayer& s, int coord, int step, int blocks) {
  return s.closed_edges && (coord + step < 0 || coord + step >= blocks);
}

}  // namespace

// The halo a block receives, per source block: the 3^k − 1 neighbour regions around it (periodic across the
// field's edges, or zeros or a reflection there that nobody sends; a dimension of one block wraps onto the block
// itself, which sends nothing).
std::vector<std::pair<int64_t, int64_t>> halo_sources(const SplitLayer& s, const DomainLayout& layout,
                                                      int64_t block, HaloPass pass) {
  const PassHalo h = pass_halo(s, pass);
  const std::vector<int> coords = layout.coords_of(block);
  const std::vector<int64_t> extents = extents_at(layout.box(block), h.scale);
  const size_t dims = coords.size();
  const int64_t channel_bytes = h.channels * 4;
  std::map<int64_t, int64_t> bytes;
  int directions = 1;
  for (size_t d = 0; d < dims; ++d) directions *= 3;
  for (int v = 0; v < directions; ++v) {
    int64_t points = 1;
    std::vector<int> source = coords;
    for (int rest = v, d = static_cast<int>(dims) - 1; d >= 0; --d, rest /= 3) {
      const int step = rest % 3 - 1;  // -1 below, 0 along the block, +1 above
      points *= step == 0 ? extents[d] : (step < 0 ? h.low[d] : h.high[d]);
      if (step != 0 && into_closed(s, coords[d], step, layout.blocks[d])) points = 0;
      source[d] = (coords[d] + step + layout.blocks[d]) % layout.blocks[d];
    }
    const int64_t from = layout.block_at(source);
    if (points > 0 && from != block) bytes[from] += points * channel_bytes;
  }
  return {bytes.begin(), bytes.end()};
}

std::vector<HaloLink> halo_send_links(const SplitLayer& s, const DomainLayout& layout, int64_t block, HaloPass pass) {
  const PassHalo h = pass_halo(s, pass);
  const std::vector<int64_t> extents = extents_at(layout.box(block), h.scale);
  const std::vector<int> coords = layout.coords_of(block);
  std::vector<HaloLink> links;
  for (size_t d = 0; d < extents.size(); ++d) {
    if (layout.blocks[d] == 1) continue;  // its own neighbour: a local copy
    int64_t across = h.channels * 4;      // the strip's bytes per point along dimension d
    for (size_t j = 0; j < extents.size(); ++j) {
      if (j != d) across *= j < d ? h.low[j] + extents[j] + h.high[j] : extents[j];
    }
    // to the high neighbour its low halo (width low), to the low neighbour its high halo (width high)
    for (const auto& [width, step] : {std::pair<int64_t, int>{h.low[d], 1}, {h.high[d], -1}}) {
      if (width == 0 || into_closed(s, coords[d], step, layout.blocks[d])) continue;  // nothing across a closed edge
      std::vector<int> to = coords;
      to[d] = (coords[d] + step + layout.blocks[d]) % layout.blocks[d];
      links.push_back({layout.block_at(to), width * across});
    }
  }
  return links;
}

HaloSend halo_sends(const SplitLayer& s, const DomainLayout& layout, int64_t block, HaloPass pass) {
  HaloSend sent;
  for (const HaloLink& link : halo_send_links(s, layout, block, pass)) {
    sent.bytes_per_sample += link.bytes_per_sample;
    sent.messages += 1;
  }
  return sent;
}

std::vector<DomainLayerCost> domain_layer_costs(const std::vector<LayerSpec>& layers, const SampleShape& input,
                                                const DomainLayout& layout) {
  const std::vector<SplitLayer> walked = split_layers(layers, input);
  std::vector<DomainLayerCost> costs;
  for (size_t i = 0; i < walked.size(); ++i) {
    const SplitLayer& s = walked[i];
    const std::string label = layer_label(static_cast<int>(i), layers[i]);
    if (!s.problem.empty()) config_fail(label + " cannot run on a split field (pipeline.domain): " + s.problem);
    check_cuts_at_layer(layout, s, label);
    check_halo_fits(layout, s, label);
    DomainLayerCost cost{s.halo_low, s.halo_high, 0, 0, 0};
    for (int64_t b = 0; b < layout.block_count(); ++b) {
      cost.halo_bytes += halo_sends(s, layout, b, HaloPass::kForward).bytes_per_sample;
      // the model's first layer computes no input gradient: nothing fills its output gradient's halo
      if (i > 0) cost.halo_bytes_backward += halo_sends(s, layout, b, HaloPass::kBackward).bytes_per_sample;
      int64_t points = 1;
      for (int64_t e : extents_at(layout.box(b), s.out_scale)) points *= e;
      cost.block_bytes = std::max(cost.block_bytes, field_channels(s.out) * points * 4);
    }
    costs.push_back(std::move(cost));
  }
  check_domain_tiles(layout);  // after the layers: their refusal names the layer whose downsampling a cut misses
  return costs;
}

}  // namespace sluice::config
