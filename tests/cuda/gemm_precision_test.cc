// Runs in every build: the GEMM mode names of the CUDA backend are plain config parsing.
#include "kernels/cuda/gemm_precision.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

TEST(GemmPrecision, EveryModeRoundTripsThroughItsName) {
  for (GemmPrecision p : {GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kBf16}) {
    EXPECT_EQ(parse_gemm_precision(gemm_precision_name(p)), p);
  }
  EXPECT_EQ(parse_gemm_precision("bf16"), GemmPrecision::kBf16);
}

TEST(GemmPrecision, UnknownNameIsAConfigErrorNamingIt) {
  try {
    parse_gemm_precision("fp16");
    FAIL() << "fp16 is not a supported GEMM precision";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConfig);
    EXPECT_NE(std::string(e.what()).find("'fp16'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp32, tf32 or bf16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::kernels
