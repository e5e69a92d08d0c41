// A field sample split into blocks (`pipeline.domain`, docs/DOMAIN.md "Configuration and layout"): where each block
// lies, whether the model's layers can run on it, and what it costs in halos. Pure arithmetic over the layer specs
// and their shapes (no MPI); the parser, `sluice plan` and the runtime's start checks read it.
//
// A field is [C][D1..Dk], the last extent fastest (sample_shape.h). `pipeline.domain: [b1..bk]` cuts dimension d
// into b_d blocks; the blocks form a product grid numbered row-major (last dimension fastest), like the points.
// Every layer sees the block at its own resolution: a layer whose input the model has downsampled by f in a
// dimension (pool kernels and conv strides multiply f, upsample factors and conv_transpose strides divide it) sees
// offset / f and extent / f, so every block cut must be a multiple of f at every layer, and of the canonical tile
// (`pipeline.domain_tile`, at the input resolution; the tile itself must be whole at every layer).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config/layer_spec.h"
#include "core/config/sample_shape.h"

namespace sluice::config {

// The blocks of `blocks` (empty: 1, no split).
int64_t domain_block_count(const std::vector<int>& blocks);

// One block: per spatial dimension its first point and its extent, at the input resolution.
struct DomainBox {
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
};

struct DomainLayout {
  std::vector<int64_t> global;             // spatial extents of the input field
  std::vector<int> blocks;                 // blocks per dimension
  std::vector<int64_t> tile;               // the canonical tile, input resolution
  std::vector<std::vector<int64_t>> cuts;  // per dimension its blocks + 1 boundaries, 0 .. global

  int64_t block_count() const { return domain_block_count(blocks); }
  std::vector<int> coords_of(int64_t block) const;  // the block's place in the grid, per dimension
  int64_t block_at(const std::vector<int>& coords) const;
  DomainBox box(int64_t block) const;
};

// The even split `sluice train` uses: in each dimension the first extent % b blocks get one point more (as
// MPI_Dims_create users and PETSc do). Throws Error(kConfig) when a dimension has more blocks than points.
DomainLayout even_domain_layout(const std::vector<int64_t>& global, const std::vector<int>& blocks,
                                const std::vector<int64_t>& tile);

// The blocks a host declares (one per block, row-major): Throws Error(kInvalidArgument) naming the block and
// dimension unless they tile the field exactly as a product grid (consecutive in each dimension from 0 to the
// global extent, the blocks of a grid row sharing their offset and extent there).
DomainLayout declared_domain_layout(const std::vector<int64_t>& global, const std::vector<int>& blocks,
                                    const std::vector<int64_t>& tile, const std::vector<DomainBox>& declared);

// Throws Error(kConfig) naming pipeline.domain_tile, the dimension and the block when a block is not a union of
// whole tiles (a cut not a multiple of the tile). domain_layer_costs checks it last.
void check_domain_tiles(const DomainLayout& layout);

// A rational per dimension: the model input's extent over the layer's (a downsampling factor; reduced).
struct Scale {
  std::vector<int64_t> num;
  std::vector<int64_t> den;
};

// What a split means for one layer, from the shapes alone (no layout).
struct SplitLayer {
  SampleShape in;                  // the layer's global input and output shapes
  SampleShape out;
  Scale in_scale;                  // input resolution relative to the model's input
  Scale out_scale;
  std::vector<int64_t> halo_low;   // per dimension, points of the input beyond the block the layer reads
  std::vector<int64_t> halo_high;  // (conv: its padding, dilation·(k − 1) split as 'same'; linear upsample: 1)
  // The backward's halo of the output gradient, at the output resolution: the tiled kernels form dx in gather form
  // (docs/DOMAIN.md, "Tiles and exact reductions"): a conv reads dy mirrored (low pad_high, high pad_low), a
  // linear upsample `factor` points beyond each edge.
  std::vector<int64_t> dy_halo_low;
  std::vector<int64_t> dy_halo_high;
  // The halo beyond the field's global edges is made on the block (a conv with padding zeros or reflect; the
  // backward's dy halo there is zeros): no block sends across those edges. Otherwise it wraps periodically.
  bool closed_edges = false;
  std::string problem;             // non-empty: why the layer cannot run on a block (then the walk stops)
};

// Walks `layers` from the field `input`; stops after the first layer with a problem (a layer the layer table marks
// as not splitting, a conv with padding none, a conv_transpose whose kernel is not its stride).
std::vector<SplitLayer> split_layers(const std::vector<LayerSpec>& layers, const SampleShape& input);

// "layer 3 (pool \"down1\")" / "layer 3 (pool)": how domain errors name a layer.
std::string layer_label(int index, const LayerSpec& layer);

// The tile `pipeline.domain_tile` defaults to, per dimension: the largest divisor of the extent that is a multiple
// of the model's downsampling f there (the least common multiple of its layers' factors) and at most
// max(f, extent / 8); the whole extent when no multiple of f divides it. It depends on the model and the field only,
// never on the split: a 256-point extent with f = 8 gets 32 (splits into 2, 4 or 8 even blocks fit), 100 with f = 1
// gets 10 (2, 5 or 10 blocks).
std::vector<int64_t> default_domain_tile(const std::vector<LayerSpec>& layers, const SampleShape& input);

// Why `tile` is not a canonical tile of this model and field (one positive entry per dimension dividing its
// extent, whole at every layer: a multiple of each layer's downsampling, naming the layer); "" when it is.
std::string domain_tile_problem(const std::vector<LayerSpec>& layers, const SampleShape& input,
                                const std::vector<int64_t>& tile);

// What a split costs at one layer.
struct DomainLayerCost {
  std::vector<int64_t> halo_low;  // as SplitLayer
  std::vector<int64_t> halo_high;
  int64_t halo_bytes = 0;          // forward halo bytes per sample all blocks send (halo_sends; the input's channels)
  int64_t block_bytes = 0;         // the layer's output on the largest block, bytes per sample
  int64_t halo_bytes_backward = 0; // backward, the output gradient's channels (halo_sends; 0 at the model's layer 0)
};

// Checks that every layer can run on the blocks of `layout` and prices its halos. Throws Error(kConfig) naming the
// layer (layer_label) and, where it applies, the dimension and block: a layer that cannot run on a block, a block
// cut that is not a multiple of the layer's downsampling, a block narrower than the layer's halo; then, naming
// pipeline.domain_tile, a block that is not whole tiles (check_domain_tiles).
std::vector<DomainLayerCost> domain_layer_costs(const std::vector<LayerSpec>& layers, const SampleShape& input,
                                                const DomainLayout& layout);

enum class HaloPass { kForward, kBackward };

// The halo bytes per sample that `block` receives at a layer (one of split_layers', on a layout
// domain_layer_costs accepted) in one pass, per source block: pairs (source, bytes) in source order, one per other
// block it reads from. Computed on demand: a grid of many blocks would otherwise keep a list per block and layer.
std::vector<std::pair<int64_t, int64_t>> halo_sources(const SplitLayer& layer, const DomainLayout& layout,
                                                      int64_t block, HaloPass pass);

// What `block` sends in one halo fill at a layer (as core/comm's halo_fill moves it: one dimension after the other,
// the strips of a later dimension spanning the earlier dimensions' filled halos, so corners travel in two hops; a
// dimension of one block wraps locally and sends nothing): bytes per sample and messages. halo_sources counts the
// halo by where its points lie; summed over all blocks the two agree when every dimension has two blocks or more
// (with one block in a dimension the corners beyond it arrive in the other dimensions' strips and a local copy).
struct HaloSend {
  int64_t bytes_per_sample = 0;
  int64_t messages = 0;
};
HaloSend halo_sends(const SplitLayer& layer, const DomainLayout& layout, int64_t block, HaloPass pass);

// The messages halo_sends counts, one per message in halo_fill's order, each with the neighbour it goes to (a
// block adjacent in one dimension: corners travel via the neighbours, never on the diagonal link). The one source
// of halo bytes for the start report, `sluice plan` (domain_layer_costs) and the rank-order estimate.
struct HaloLink {
  int64_t to = 0;
  int64_t bytes_per_sample = 0;
};
std::vector<HaloLink> halo_send_links(const SplitLayer& layer, const DomainLayout& layout, int64_t block,
                                      HaloPass pass);

}  // namespace sluice::config
