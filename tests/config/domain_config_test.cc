// pipeline.domain and pipeline.domain_tile as the parser reads them: the typed values, the default tile, and every
// refusal naming the key (or the layer entry) and the value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "tests/config/config_text.h"

namespace sluice::config {
namespace {

using testing::replace;

// A small U-Net on a 16 x 16 field: one pool level (downsampling 2), a skip joined by concat. Lines: model.layers
// entries are on lines 4-10, the pipeline section on line 11.
const char* const kUnet = R"(model:
  inputs: [2, 16, 16]
  layers:
    - {type: conv, channels: 4, kernel: 3, padding: zeros, name: enc}
    - {type: relu}
    - {type: pool, kernel: 2, mode: max, name: down}
    - {type: conv, channels: 8, kernel: 3, padding: periodic}
    - {type: upsample, factor: 2}
    - {type: concat, from: enc}
    - {type: conv, channels: 1, kernel: 1}
pipeline: {stages: 1, domain: [2, 2]}
data: {type: synthetic, batch: 2}
)";

std::string config_error(const std::string& text) {
  try {
    parse_config(text);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected a config error for:\n" << text;
  return "";
}

// Every fragment must appear in the message.
void expect_mentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const std::string& fragment : fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos) << "\"" << fragment << "\" not in: " << message;
  }
}

TEST(DomainConfig, ReadsTheBlocksAndDefaultsTheTileFromTheModelAndField) {
  const Config config = parse_config(kUnet);
  EXPECT_EQ(config.pipeline.domain, (std::vector<int>{2, 2}));
  // 16 points, downsampling 2: the largest multiple of 2 dividing 16 and at most 16 / 8 = 2.
  EXPECT_EQ(config.pipeline.domain_tile, (std::vector<int64_t>{2, 2}));
  const Config tiled = parse_config(replace(kUnet, "domain: [2, 2]", "domain: [2, 1], domain_tile: [8, 4]"));
  EXPECT_EQ(tiled.pipeline.domain, (std::vector<int>{2, 1}));
  EXPECT_EQ(tiled.pipeline.domain_tile, (std::vector<int64_t>{8, 4}));
  // No domain: nothing split, the tile still defaults (reductions are formed per tile split or not).
  const Config plain = parse_config(replace(kUnet, "pipeline: {stages: 1, domain: [2, 2]}", "pipeline: {stages: 1}"));
  EXPECT_TRUE(plain.pipeline.domain.empty());
  EXPECT_EQ(plain.pipeline.domain_tile, (std::vector<int64_t>{2, 2}));
}

TEST(DomainConfig, TheDefaultTileNeverDependsOnTheSplit) {
  const std::string big = replace(kUnet, "inputs: [2, 16, 16]", "inputs: [2, 256, 100]");
  for (const char* split : {"[1, 1]", "[2, 2]", "[8, 5]"}) {
    const Config config = parse_config(replace(big, "domain: [2, 2]", std::string("domain: ") + split));
    // 256 / 8 = 32 (a multiple of 2); 100: the largest even divisor <= 12 is 10.
    EXPECT_EQ(config.pipeline.domain_tile, (std::vector<int64_t>{32, 10})) << split;
  }
}

TEST(DomainConfig, BadBlockListsAreRefusedNamingTheKeyAndValue) {
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain: 4")),
                  {"pipeline.domain (line 11)", "expected a list of blocks", "\"4\""});
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain: [2]")),
                  {"pipeline.domain (line 11)", "one entry per spatial dimension of model.inputs [2, 16, 16] (2), got 1"});
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain: [2, 0]")),
                  {"pipeline.domain.1", "positive number of blocks", "\"0\""});
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain: [2, two]")),
                  {"pipeline.domain.1", "\"two\""});
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain: [2, 17]")),
                  {"pipeline.domain.1", "17 blocks in spatial dimension 2, but the field has 16 points there"});
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domains: [2, 2]")), {"domains"});
}

TEST(DomainConfig, BadTilesAreRefusedNamingTheKeyTheValueAndTheLayer) {
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain_tile: [4, 4, 4]")),
                  {"pipeline.domain_tile", "got 3"});
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain_tile: [4, -4]")),
                  {"pipeline.domain_tile.1", "\"-4\""});
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain_tile: [3, 4]")),
                  {"pipeline.domain_tile", "tile 3 in spatial dimension 1 does not divide the field's extent 16"});
  // Whole at every layer: after the pool, a tile of 1 input point would be half a point.
  expect_mentions(config_error(replace(kUnet, "domain: [2, 2]", "domain_tile: [4, 1]")),
                  {"pipeline.domain_tile", "tile 1 in spatial dimension 2", "layer 2 (pool \"down\")",
                   "multiple of 2"});
}

TEST(DomainConfig, AModelOnRowsTakesNoDomain) {
  const std::string rows = "model:\n  inputs: 16\n  layers:\n    - {type: linear, outputs: 4}\n"
                           "pipeline: {domain: [2]}\n";
  expect_mentions(config_error(rows), {"pipeline.domain (line 5)", "needs a field model", "feature count"});
  expect_mentions(config_error(replace(rows, "domain: [2]", "domain_tile: [4]")), {"pipeline.domain_tile"});
}

TEST(DomainConfig, ALayerThatCannotRunOnABlockIsRefusedAtItsEntry) {
  const std::string flat = replace(kUnet, "    - {type: conv, channels: 1, kernel: 1}\n",
                                   "    - {type: conv, channels: 1, kernel: 1}\n    - {type: flatten}\n");
  expect_mentions(config_error(flat),
                  {"model.layers.7 (line 11)", "layer 7 (flatten)", "cannot run on a split field (pipeline.domain [2, 2])"});
  // Not split (every entry 1): any layer.
  EXPECT_NO_THROW(parse_config(replace(flat, "domain: [2, 2]", "domain: [1, 1]")));
  const std::string spectral =
      replace(kUnet, "{type: conv, channels: 8, kernel: 3, padding: periodic}", "{type: spectral_conv, channels: 8, modes: [2, 2]}");
  expect_mentions(config_error(spectral), {"model.layers.3 (line 7)", "layer 3 (spectral_conv)"});
  const std::string valid_conv = replace(kUnet, "{type: conv, channels: 1, kernel: 1}", "{type: conv, channels: 1, kernel: 3}");
  expect_mentions(config_error(valid_conv), {"model.layers.6", "layer 6 (conv)", "padding none shrinks the field"});
}

// pipeline.recompute_halos (core/config/recompute_halos.h): exchange by default, stash when asked, anything else
// refused naming the key, its line and the valid values.
TEST(DomainConfig, RecomputeHalosIsExchangeOrStash) {
  EXPECT_EQ(parse_config(kUnet).pipeline.recompute_halos, RecomputeHalos::kExchange);
  const std::string full = "pipeline: {stages: 1, domain: [2, 2], recompute: full";
  EXPECT_EQ(parse_config(replace(kUnet, "pipeline: {stages: 1, domain: [2, 2]", full + ", recompute_halos: stash"))
                .pipeline.recompute_halos,
            RecomputeHalos::kStash);
  EXPECT_EQ(parse_config(replace(kUnet, "pipeline: {stages: 1, domain: [2, 2]", full + ", recompute_halos: exchange"))
                .pipeline.recompute_halos,
            RecomputeHalos::kExchange);
  expect_mentions(
      config_error(replace(kUnet, "pipeline: {stages: 1, domain: [2, 2]", full + ", recompute_halos: keep")),
      {"pipeline.recompute_halos (line 11)", "exchange, stash", "keep"});
}

}  // namespace
}  // namespace sluice::config
