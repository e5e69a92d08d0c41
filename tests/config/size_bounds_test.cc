// Sizes whose products overflow (rows × features, in × out weights, batch × accumulate) are refused when the
// config is parsed, naming the key and where it came from, instead of wrapping into a crash later.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"

namespace sluice::config {
namespace {

const char* const kConfig = R"(model:
  inputs: 32
  layers:
    - {type: linear, outputs: 64}
    - {type: residual_mlp, hidden: 128}
    - {type: linear, outputs: 8}
data: {type: synthetic, batch: 64}
)";

std::string config_error(const std::vector<std::string>& overrides) {
  try {
    parse_config(kConfig, overrides);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected a config error";
  return "";
}

TEST(SizeBounds, BatchTimesInputsNamesTheOverride) {
  EXPECT_EQ(config_error({"pipeline.stages=1", "data.batch=2305843009213693960"}),
            "config: data.batch (from --set data.batch=2305843009213693960): 2305843009213693960 (data.batch) × 32 "
            "(model.inputs) × 4 bytes overflows a 64-bit size (the [data.batch][model.inputs] activations); use a "
            "smaller value");
}

TEST(SizeBounds, WidthsBeyondBlasNameTheKey) {
  EXPECT_EQ(config_error({"model.inputs=2305843009213693952"}),
            "config: model.inputs (from --set model.inputs=2305843009213693952): 2305843009213693952 features exceed "
            "the largest matrix dimension BLAS takes (2147483647)");
  const std::string hidden = config_error({"model.layers.1.hidden=4294967296"});
  EXPECT_NE(hidden.find("model.layers.1.hidden (from --set model.layers.1.hidden=4294967296): 4294967296 features"),
            std::string::npos)
      << hidden;
}

TEST(SizeBounds, WeightsAndActivationsOfWideLayers) {
  // 2^31-1 × 2^31-1 × 4 bytes fits in 64 bits; batch 2^33 × 2^31-1 × 4 does not.
  const std::string wide = config_error({"data.batch=8589934592", "model.layers.0.outputs=2147483647"});
  EXPECT_NE(wide.find("config: data.batch (from --set data.batch=8589934592): 8589934592 (data.batch) × 2147483647 "
                      "(model.layers.0.outputs) × 4 bytes overflows"),
            std::string::npos)
      << wide;
}

TEST(SizeBounds, BatchTimesAccumulate) {
  const std::string message = config_error({"data.batch=1152921504606846976", "model.inputs=1",
                                            "model.layers.0.outputs=1", "model.layers.1.hidden=1",
                                            "model.layers.2.outputs=1", "optimizer={type: sgd, accumulate: 16}"});
  EXPECT_NE(message.find("(the samples of one accumulation window)"), std::string::npos) << message;
}

TEST(SizeBounds, LargeButRepresentableSizesParse) {
  EXPECT_EQ(parse_config(kConfig, {"data.batch=100000000000"}).data.batch, 100000000000);
  EXPECT_EQ(parse_config(kConfig, {"model.inputs=2147483647"}).model.inputs, 2147483647);
}

}  // namespace
}  // namespace sluice::config
