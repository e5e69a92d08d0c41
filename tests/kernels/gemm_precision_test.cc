// The GEMM precision names behind the config key precision (alias gemm_precision): plain parsing, every build.
#include "kernels/gemm_precision.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

TEST(GemmPrecision, EveryModeRoundTripsThroughItsName) {
  for (GemmPrecision p : {GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kBf16}) {
    EXPECT_EQ(parse_gemm_precision(gemm_precision_name(p)), p);
  }
  EXPECT_EQ(parse_gemm_precision("fp32"), GemmPrecision::kFp32);
  EXPECT_EQ(parse_gemm_precision("tf32"), GemmPrecision::kTf32);
  EXPECT_EQ(parse_gemm_precision("bf16"), GemmPrecision::kBf16);
}

TEST(GemmPrecision, UnknownNameIsAConfigErrorNamingIt) {
  for (const std::string bad : {"fp16", "BF16", ""}) {
    try {
      parse_gemm_precision(bad);
      FAIL() << "'" << bad << "' is not a supported GEMM precision";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kConfig);
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("fp32, tf32 or bf16"), std::string::npos) << e.what();
    }
  }
}

TEST(GemmPrecision, Fp32OnlyCheckPassesFp32AndNamesTheDeviceForTheOthers) {
  EXPECT_NO_THROW(require_fp32_gemm(GemmPrecision::kFp32, "cpu"));
  try {
    require_fp32_gemm(GemmPrecision::kTf32, "fake:3");
    FAIL() << "tf32 was accepted by the fp32-only check";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_EQ(std::string(e.what()),
              "precision: tf32 is not available on device fake:3; the FAKE:3 backend computes GEMMs in fp32");
  }
}

}  // namespace
}  // namespace sluice::kernels
