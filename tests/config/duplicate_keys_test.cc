// yaml-cpp keeps a key written twice and every lookup returns the first: `steps: 10` followed by `steps: 1000`
// used to train 10 steps without a word. Same for a second YAML document after `---`. Both are refused, naming
// the lines, in the file and in `--set` values. The walk that finds them visits an aliased node once per alias,
// so nested aliases (an "alias bomb") multiply its work ninefold per level: it is capped (issue 28).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"

namespace sluice::config {
namespace {

const char* const kValid = R"(model:
  inputs: 4
  layers:
    - {type: linear, outputs: 2}
data: {type: synthetic, batch: 8}
steps: 10
)";

std::string config_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(text, overrides);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected a config error for:\n" << text;
  return "";
}

TEST(DuplicateKeys, TopLevelKeyTwiceNamesBothLines) {
  EXPECT_EQ(config_error(std::string(kValid) + "steps: 1000\n"),
            "config: steps: duplicate key \"steps\" at line 6 and line 7; write each key once");
}

TEST(DuplicateKeys, NestedAndFlowMapsAndSequenceEntries) {
  EXPECT_EQ(config_error(std::string(kValid) + "model: {inputs: 3}\n"),
            "config: model: duplicate key \"model\" at line 1 and line 7; write each key once");
  const std::string flow =
      config_error("model: {inputs: 4, layers: [{type: linear, outputs: 2, outputs: 3}]}\ndata: {type: synthetic, batch: 8}\n");
  EXPECT_EQ(flow, "config: model.layers.0.outputs: duplicate key \"outputs\" at line 1 and line 1; write each key once");
  EXPECT_NE(config_error("model:\n  inputs: 4\n  inputs: 5\n  layers: [{type: linear, outputs: 2}]\n"
                         "data: {type: synthetic, batch: 8}\n")
                .find("model.inputs: duplicate key \"inputs\" at line 2 and line 3"),
            std::string::npos);
}

TEST(DuplicateKeys, ASecondDocumentIsRefused) {
  EXPECT_EQ(config_error(std::string(kValid) + "---\nsteps: 1000\n"),
            "config: a second YAML document starts at line 8 (after \"---\"); a config is one document, and the "
            "second would be ignored");
  // A document-end marker alone is still one document.
  EXPECT_NO_THROW(parse_config(std::string(kValid) + "...\n"));
}

TEST(DuplicateKeys, OverrideValuesFollowTheSameRules) {
  EXPECT_EQ(config_error(kValid, {"data={type: synthetic, batch: 8, batch: 9}"}),
            "config: --set data={type: synthetic, batch: 8, batch: 9}: data.batch: duplicate key \"batch\" at line 1 "
            "and line 1; write each key once");
  EXPECT_NE(config_error(kValid, {"steps=5\n---\n6"}).find("--set steps=5\n---\n6: a second YAML document"),
            std::string::npos);
  // Setting a key twice on the command line is an ordinary override: the last wins.
  EXPECT_EQ(parse_config(kValid, {"steps=5", "steps=6"}).steps, 6);
}

// `depth` levels of anchors, each a list of nine aliases of the one before: 9^depth nodes once expanded.
std::string alias_bomb(int depth) {
  std::string text = "bomb0: &b0 [x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= depth; ++level) {
    const std::string previous = "*b" + std::to_string(level - 1);
    text += "bomb" + std::to_string(level) + ": &b" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", " : "") + previous;
    text += "]\n";
  }
  return text;
}

TEST(DuplicateKeys, AnAliasBombIsRefusedNamingTheLimitAtOnce) {
  alarm(30);  // unfixed, the walk of 9^12 nodes takes hours
  const auto start = std::chrono::steady_clock::now();
  const std::string message = config_error(std::string(kValid) + alias_bomb(12));
  EXPECT_NE(message.find("more than 100000 YAML nodes"), std::string::npos) << message;
  EXPECT_NE(config_error(kValid, {"steps=" + alias_bomb(12)}).find("more than 100000 YAML nodes"), std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  alarm(0);
}

TEST(DuplicateKeys, OrdinaryAliasesStillWork) {
  const sluice::config::Config config = parse_config(R"(model:
  inputs: 4
  layers:
    - &hidden {type: linear, outputs: 2}
    - *hidden
    - {type: linear, outputs: 3}
data: &data {type: synthetic, batch: 8}
steps: 10
)");
  ASSERT_EQ(config.model.layers.size(), 3u);
  EXPECT_EQ(config.model.layers[1].outputs, 2);
  EXPECT_EQ(config.model.layers[2].outputs, 3);
  // Duplicates inside an aliased map are still found.
  EXPECT_NE(config_error("model:\n  inputs: 4\n  layers:\n    - &l {type: linear, outputs: 2, outputs: 3}\n"
                         "    - *l\ndata: {type: synthetic, batch: 8}\n")
                .find("duplicate key \"outputs\""),
            std::string::npos);
}

TEST(DuplicateKeys, AValidConfigStillParses) { EXPECT_EQ(parse_config(kValid).steps, 10); }

}  // namespace
}  // namespace sluice::config
