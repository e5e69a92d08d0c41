// The domain layout (core/config/domain_layout.h): even and declared splits, the refusals naming the layer and the
// dimension, and halo bytes counted by hand.
#include "core/config/domain_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"

namespace sluice::config {
namespace {

using Received = std::vector<std::pair<int64_t, int64_t>>;

// Periodic by default: the hand counts below follow the wrap across the field's edges.
LayerSpec conv(int64_t channels, int64_t kernel, Padding padding = Padding::kPeriodic) {
  LayerSpec layer;
  layer.type = LayerType::kConv;
  layer.channels = channels;
  layer.kernel = {kernel};
  layer.padding = padding;
  return layer;
}

LayerSpec of_type(LayerType type, const std::string& name = "") {
  LayerSpec layer;
  layer.type = type;
  layer.name = name;
  return layer;
}

LayerSpec pool(int64_t kernel, const std::string& name = "") {
  LayerSpec layer = of_type(LayerType::kPool, name);
  layer.kernel = {kernel};
  layer.mode = "max";
  return layer;
}

LayerSpec upsample(int64_t factor) {
  LayerSpec layer = of_type(LayerType::kUpsample);
  layer.factor = {factor};
  layer.mode = "nearest";
  return layer;
}

// The kConfig message of domain_layer_costs, or a failure when it accepts the layout.
std::string costs_error(const std::vector<LayerSpec>& layers, const SampleShape& input, const DomainLayout& layout) {
  try {
    domain_layer_costs(layers, input, layout);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected domain_layer_costs to refuse the layout";
  return "";
}

void expect_mentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const std::string& fragment : fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos) << "\"" << fragment << "\" not in: " << message;
  }
}

TEST(DomainLayout, AnEvenSplitGivesTheFirstBlocksTheRemainder) {
  const DomainLayout layout = even_domain_layout({10, 8}, {3, 2}, {1, 1});
  EXPECT_EQ(layout.cuts[0], (std::vector<int64_t>{0, 4, 7, 10}));
  EXPECT_EQ(layout.cuts[1], (std::vector<int64_t>{0, 4, 8}));
  ASSERT_EQ(layout.block_count(), 6);
  // Row-major over the grid, the last dimension fastest: block 3 is grid place [1, 1].
  EXPECT_EQ(layout.coords_of(3), (std::vector<int>{1, 1}));
  EXPECT_EQ(layout.block_at({2, 0}), 4);
  EXPECT_EQ(layout.box(3).offset, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(layout.box(3).extent, (std::vector<int64_t>{3, 4}));
  EXPECT_THROW(even_domain_layout({4}, {5}, {1}), Error);  // more blocks than points
}

TEST(DomainLayout, DeclaredBlocksMayBeUnevenButMustTileTheFieldAsAGrid) {
  const std::vector<DomainBox> slabs = {{{0, 0}, {6, 8}}, {{6, 0}, {4, 8}}};
  const DomainLayout layout = declared_domain_layout({10, 8}, {2, 1}, {2, 8}, slabs);
  EXPECT_EQ(layout.cuts[0], (std::vector<int64_t>{0, 6, 10}));
  auto refusal = [](const std::vector<DomainBox>& declared) {
    try {
      declared_domain_layout({10, 8}, {2, 1}, {1, 1}, declared);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  expect_mentions(refusal({{{0, 0}, {6, 8}}, {{7, 0}, {3, 8}}}), {"block 1", "spatial dimension 1", "expected offset 6"});
  expect_mentions(refusal({{{0, 0}, {6, 8}}, {{6, 0}, {3, 8}}}), {"block 1", "must end at the field's extent 10"});
  expect_mentions(refusal({{{0, 0}, {6, 8}}}), {"1 blocks declared for a grid of 2"});
  // A 2 x 2 grid whose second row cuts dimension 2 elsewhere is no product grid.
  const std::vector<DomainBox> skewed = {{{0, 0}, {5, 4}}, {{0, 4}, {5, 4}}, {{5, 0}, {5, 3}}, {{5, 3}, {5, 5}}};
  try {
    declared_domain_layout({10, 8}, {2, 2}, {1, 1}, skewed);
    ADD_FAILURE() << "a skewed grid was accepted";
  } catch (const Error& error) {
    expect_mentions(error.what(), {"block 2", "spatial dimension 2", "must share their offset and extent"});
  }
}

TEST(DomainLayout, ABlockCutOffTheDownsamplingIsRefusedNamingTheLayerAndDimension) {
  const std::vector<LayerSpec> layers = {conv(4, 3), pool(2, "down"), conv(4, 3)};
  const SampleShape input = {1, 8, 10};
  // 10 points in 2 blocks: 5 and 5; the pool halves them.
  expect_mentions(costs_error(layers, input, even_domain_layout({8, 10}, {1, 2}, {1, 1})),
                  {"layer 1 (pool \"down\")", "spatial dimension 2", "cumulative factor 2", "offset 0, extent 5"});
  // Undone by the upsample: the pool's factor still binds, the layers after it add nothing.
  const std::vector<LayerSpec> unet = {pool(2), upsample(2), conv(1, 3)};
  EXPECT_NO_THROW(domain_layer_costs(unet, input, even_domain_layout({8, 10}, {2, 1}, {2, 2})));
  expect_mentions(costs_error(unet, input, declared_domain_layout({8, 10}, {2, 1}, {1, 1},
                                                                  {{{0, 0}, {3, 10}}, {{3, 0}, {5, 10}}})),
                  {"layer 0 (pool)", "spatial dimension 1"});
  // Cuts on the downsampling but off the tile: refused naming the tile.
  expect_mentions(costs_error(unet, input, even_domain_layout({8, 10}, {2, 1}, {8, 2})),
                  {"pipeline.domain_tile [8, 2]", "spatial dimension 1 block 0 of 2 spans points [0, 4)"});
}

TEST(DomainLayout, ALayerThatCannotRunOnABlockIsRefusedNamingIt) {
  const SampleShape input = {1, 8, 8};
  const DomainLayout layout = even_domain_layout({8, 8}, {2, 2}, {1, 1});
  expect_mentions(costs_error({conv(2, 3), of_type(LayerType::kFlatten, "flat")}, input, layout),
                  {"layer 1 (flatten \"flat\") cannot run on a split field"});
  LayerSpec spectral = of_type(LayerType::kSpectralConv);
  spectral.channels = 2;
  spectral.modes = {2, 2};
  expect_mentions(costs_error({spectral}, input, layout), {"layer 0 (spectral_conv)"});
  // The table's column, not a list in code.
  EXPECT_TRUE(runs_split(LayerType::kConv));
  EXPECT_TRUE(runs_split(LayerType::kGroupNorm));
  for (LayerType type : {LayerType::kSpectralConv, LayerType::kFnoBlock, LayerType::kPatchEmbed,
                         LayerType::kTransformer, LayerType::kUnpatch, LayerType::kFlatten, LayerType::kReshape,
                         LayerType::kCustom}) {
    EXPECT_FALSE(runs_split(type)) << layer_type_name(type);
  }
}

TEST(DomainLayout, AHaloWiderThanABlockIsRefused) {
  const std::vector<LayerSpec> layers = {conv(1, 5)};  // halo 2 each side
  expect_mentions(costs_error(layers, {1, 8}, even_domain_layout({8}, {8}, {1})),
                  {"layer 0 (conv) reads a halo of 2 points of its input in spatial dimension 1", "block 0 is only 1 points wide"});
  EXPECT_NO_THROW(domain_layer_costs(layers, {1, 8}, even_domain_layout({8}, {4}, {1})));
}

// The backward halo bytes per sample all blocks send at layer 0 of `layers` (halo_sends): domain_layer_costs
// reports none there, since the model's first layer computes no input gradient, so the tests read the fill itself.
int64_t backward_sent(const std::vector<LayerSpec>& layers, const SampleShape& input, const DomainLayout& layout) {
  const SplitLayer layer = split_layers(layers, input)[0];
  int64_t bytes = 0;
  for (int64_t b = 0; b < layout.block_count(); ++b) bytes += halo_sends(layer, layout, b, HaloPass::kBackward).bytes_per_sample;
  return bytes;
}

// A 3x3 conv (halo 1 each side) on a [3, 8, 8] field in 2 x 2 blocks of 4 x 4: each block receives the ring
// around it, 6·6 − 4·4 = 20 points of 3 channels, 240 bytes; its side neighbours send 4 + 4 points each (both
// sides wrap to the same block), the diagonal one the 4 corners.
TEST(DomainLayout, HaloBytesOfA3x3ConvOn2x2BlocksByHand) {
  const DomainLayout layout = even_domain_layout({8, 8}, {2, 2}, {1, 1});
  const std::vector<DomainLayerCost> costs = domain_layer_costs({conv(5, 3)}, {3, 8, 8}, layout);
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_EQ(costs[0].halo_low, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(costs[0].halo_high, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(costs[0].halo_bytes, 4 * 240);
  // The backward's halo is the output gradient's, 5 channels: 20 points · 5 · 4 bytes per block.
  EXPECT_EQ(backward_sent({conv(5, 3)}, {3, 8, 8}, layout), 4 * 400);
  EXPECT_EQ(costs[0].halo_bytes_backward, 0);  // the model's first layer: no backward fill
  // As the second layer the conv's backward halo counts.
  EXPECT_EQ(domain_layer_costs({conv(3, 1), conv(5, 3)}, {3, 8, 8}, layout)[1].halo_bytes_backward, 4 * 400);
  EXPECT_EQ(halo_sources(split_layers({conv(5, 3)}, {3, 8, 8})[0], layout, 0, HaloPass::kForward),
            (Received{{1, 8 * 3 * 4}, {2, 8 * 3 * 4}, {3, 4 * 3 * 4}}));
  EXPECT_EQ(costs[0].block_bytes, 5 * 16 * 4);  // 5 output channels on 4 x 4 points
  // One block along dimension 2: it wraps onto the block itself (no message); the other sends 4·6 − ... : the
  // padded 6 x 10 box less the 4 x 10 the block fills itself = 20 points.
  const DomainLayout slabs = even_domain_layout({8, 8}, {2, 1}, {1, 1});
  const std::vector<DomainLayerCost> slab_costs = domain_layer_costs({conv(5, 3)}, {3, 8, 8}, slabs);
  EXPECT_EQ(halo_sources(split_layers({conv(5, 3)}, {3, 8, 8})[0], slabs, 1, HaloPass::kForward),
            (Received{{0, 20 * 3 * 4}}));
  EXPECT_EQ(slab_costs[0].block_bytes, 5 * 32 * 4);
}

TEST(DomainLayout, UnevenBlocksAndLowerLevelsAreCountedAtTheirOwnResolution) {
  // [1, 10] in 3 blocks of 4, 3, 3: a 3-wide conv reads one point from each neighbour: 2 points per block.
  const DomainLayout layout = even_domain_layout({10}, {3}, {1});
  const std::vector<DomainLayerCost> costs = domain_layer_costs({conv(2, 3)}, {1, 10}, layout);
  EXPECT_EQ(costs[0].halo_bytes, 3 * 2 * 4);
  EXPECT_EQ(backward_sent({conv(2, 3)}, {1, 10}, layout), 3 * 2 * 2 * 4);  // the output gradient has 2 channels
  EXPECT_EQ(costs[0].block_bytes, 2 * 4 * 4);  // the largest block: 4 points, 2 channels
  // After a pool of 2 the blocks are 4 and 4 points of [2, 16]: the 3x conv there reads 2 points per block.
  const std::vector<DomainLayerCost> pooled =
      domain_layer_costs({conv(2, 3), pool(2), conv(2, 3)}, {1, 16}, even_domain_layout({16}, {2}, {2}));
  EXPECT_EQ(pooled[0].halo_bytes, 2 * 2 * 1 * 4);  // 1 input channel, 2 points per block
  EXPECT_EQ(pooled[2].halo_bytes, 2 * 2 * 2 * 4);  // 2 channels
  EXPECT_EQ(pooled[2].block_bytes, 2 * 4 * 4);
}

// The backward forms dx in gather form (docs/DOMAIN.md, tiles section): an even kernel's halo is mirrored for dy,
// and a linear upsample's dy halo is `factor` output points wide.
TEST(DomainLayout, TheBackwardHaloIsTheOutputGradients) {
  const DomainLayout thirds = even_domain_layout({12}, {3}, {1});
  const SplitLayer even_kernel = split_layers({conv(1, 2)}, {1, 12})[0];  // 'same': pad 0 low, 1 high
  EXPECT_EQ(halo_sources(even_kernel, thirds, 1, HaloPass::kForward), (Received{{2, 4}}));   // from above
  EXPECT_EQ(halo_sources(even_kernel, thirds, 1, HaloPass::kBackward), (Received{{0, 4}}));  // from below
  LayerSpec linear = upsample(2);
  linear.mode = "linear";
  // [1, 8] in 2 blocks: forward 1 input point each side (2 per block); backward 2 output points each side.
  const std::vector<DomainLayerCost> costs = domain_layer_costs({linear}, {1, 8}, even_domain_layout({8}, {2}, {1}));
  EXPECT_EQ(costs[0].halo_low, (std::vector<int64_t>{1}));
  EXPECT_EQ(costs[0].halo_bytes, 2 * 2 * 4);
  EXPECT_EQ(backward_sent({linear}, {1, 8}, even_domain_layout({8}, {2}, {1})), 2 * 4 * 4);
}

// What a block sends as halo_fill moves it (the start report's paper number): on a grid of two blocks or more in
// every dimension, every halo point once, so the blocks' sends add up to what halo_sources says they receive.
TEST(DomainLayout, HaloSendsAreWhatTheFillMoves) {
  const std::vector<DomainBox> boxes = {{{0, 0}, {2, 6}}, {{0, 6}, {2, 2}}, {{2, 0}, {6, 6}}, {{2, 6}, {6, 2}}};
  const DomainLayout uneven = declared_domain_layout({8, 8}, {2, 2}, {2, 2}, boxes);
  const SplitLayer layer = split_layers({conv(5, 3)}, {3, 8, 8})[0];
  for (const HaloPass pass : {HaloPass::kForward, HaloPass::kBackward}) {
    int64_t sent = 0, received = 0;
    for (int64_t b = 0; b < 4; ++b) {
      const HaloSend s = halo_sends(layer, uneven, b, pass);
      EXPECT_EQ(s.messages, 4) << "block " << b;  // both strips in both dimensions
      sent += s.bytes_per_sample;
      for (const auto& [from, bytes] : halo_sources(layer, uneven, b, pass)) received += bytes;
    }
    EXPECT_EQ(sent, received);
  }
  // Block 0 (2 x 6), forward, 3 channels: rows 1 + 1 of 6 points, then columns 1 + 1 of 2 + 1 + 1 points.
  EXPECT_EQ(halo_sends(layer, uneven, 0, HaloPass::kForward).bytes_per_sample, 3 * 4 * (2 * 6 + 2 * 4));
  // Slabs: one block along dimension 2 wraps locally; the strips of dimension 1 are 8 points wide, 2 messages. The
  // corners then come by the local wrap: halo_sources counts 10-point strips from block 0.
  const DomainLayout slabs = even_domain_layout({8, 8}, {2, 1}, {1, 1});
  const HaloSend slab = halo_sends(layer, slabs, 1, HaloPass::kForward);
  EXPECT_EQ(slab.bytes_per_sample, 2 * 8 * 3 * 4);
  EXPECT_EQ(slab.messages, 2);

  // Padding zeros: nothing crosses the field's global edges (halo_fill zeroes those sides), so each block of the
  // uneven grid sends one strip per dimension, toward the field's inside. The strips of dimension 2 still span the
  // filled halo of dimension 1, zeros included, so they send the zero corner point halo_sources does not count.
  const SplitLayer walled = split_layers({conv(5, 3, Padding::kZeros)}, {3, 8, 8})[0];
  for (const HaloPass pass : {HaloPass::kForward, HaloPass::kBackward}) {
    for (int64_t b = 0; b < 4; ++b) EXPECT_EQ(halo_sends(walled, uneven, b, pass).messages, 2) << "block " << b;
  }
  // Block 0 (2 x 6): down a row of 6 points, right a column of 1 + 2 + 1 (the top one a zero); 3 channels.
  EXPECT_EQ(halo_sends(walled, uneven, 0, HaloPass::kForward).bytes_per_sample, 3 * 4 * (6 + 4));
  // Block 3 (6 x 2): up a row of 2, left a column of 1 + 6 + 1; backward: the output gradient's 5 channels.
  EXPECT_EQ(halo_sends(walled, uneven, 3, HaloPass::kForward).bytes_per_sample, 3 * 4 * (2 + 8));
  EXPECT_EQ(halo_sends(walled, uneven, 3, HaloPass::kBackward).bytes_per_sample, 5 * 4 * (2 + 8));
  // Block 0 receives a column of 2 from block 1, a row of 6 from block 2, the one inner corner from block 3.
  EXPECT_EQ(halo_sources(walled, uneven, 0, HaloPass::kForward), (Received{{1, 2 * 12}, {2, 6 * 12}, {3, 12}}));
  // Slabs: the bottom block sends only up (a row of 8); its one-block dimension 2 sends nothing.
  const HaloSend walled_slab = halo_sends(walled, slabs, 1, HaloPass::kForward);
  EXPECT_EQ(walled_slab.bytes_per_sample, 8 * 3 * 4);
  EXPECT_EQ(walled_slab.messages, 1);
  EXPECT_EQ(halo_sources(walled, slabs, 1, HaloPass::kForward), (Received{{0, 8 * 3 * 4}}));
}

// Reflect padding makes its halo at the global edges on the block too: what the blocks send is the zero padding's.
TEST(DomainLayout, ReflectPaddingSendsWhatZeroPaddingSends) {
  const std::vector<DomainBox> boxes = {{{0, 0}, {2, 6}}, {{0, 6}, {2, 2}}, {{2, 0}, {6, 6}}, {{2, 6}, {6, 2}}};
  const DomainLayout uneven = declared_domain_layout({8, 8}, {2, 2}, {2, 2}, boxes);
  const SplitLayer reflect = split_layers({conv(5, 3, Padding::kReflect)}, {3, 8, 8})[0];
  const SplitLayer zeros = split_layers({conv(5, 3, Padding::kZeros)}, {3, 8, 8})[0];
  for (const HaloPass pass : {HaloPass::kForward, HaloPass::kBackward}) {
    for (int64_t b = 0; b < 4; ++b) {
      EXPECT_EQ(halo_sends(reflect, uneven, b, pass).bytes_per_sample,
                halo_sends(zeros, uneven, b, pass).bytes_per_sample);
      EXPECT_EQ(halo_sends(reflect, uneven, b, pass).messages, 2) << "block " << b;
    }
  }
  EXPECT_EQ(halo_sends(reflect, uneven, 0, HaloPass::kForward).bytes_per_sample, 3 * 4 * (6 + 4));
}

// A reflect-padded conv needs tiles wider than its halo at its input's level (the fold stays in the tile).
TEST(DomainLayout, AReflectPaddedConvNeedsTilesWiderThanItsHalo) {
  const std::vector<LayerSpec> layers = {conv(2, 3), pool(2), conv(2, 5, Padding::kReflect)};  // halo 2 after the pool
  EXPECT_EQ(domain_tile_problem(layers, {1, 16}, {8}), "");  // 4 points there
  expect_mentions(domain_tile_problem(layers, {1, 16}, {4}),
                  {"tile 4 in spatial dimension 1 is 2 points at the input of a reflect-padded conv whose halo there "
                   "is 2", "layer 2 (conv)"});
}

TEST(DomainLayout, TheDefaultTileIsTheModelsAndTheFieldsAndTileProblemsNameTheLayer) {
  // Downsampling 8: 256 / 8 = 32 is a multiple of 8; for 96 the multiples of 8 up to 12 dividing it: 8.
  EXPECT_EQ(default_domain_tile({conv(2, 3), pool(2), pool(4)}, {1, 256, 96}), (std::vector<int64_t>{32, 8}));
  // No downsampling: 100 / 8 -> the largest divisor up to 12 is 10; 7 points: 1.
  EXPECT_EQ(default_domain_tile({conv(2, 3)}, {1, 100, 7}), (std::vector<int64_t>{10, 1}));
  EXPECT_EQ(default_domain_tile({conv(2, 3)}, {1, 2147483647}), (std::vector<int64_t>{1}));  // a prime: at once
  EXPECT_EQ(domain_tile_problem({pool(2, "p")}, {1, 8}, {2}), "");
  expect_mentions(domain_tile_problem({conv(1, 3), pool(4, "p")}, {1, 8}, {2}),
                  {"tile 2 in spatial dimension 1 is not whole at layer 1 (pool \"p\")", "multiple of 4"});
}

}  // namespace
}  // namespace sluice::config
