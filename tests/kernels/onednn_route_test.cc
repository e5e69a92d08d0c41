// SLUICE_ONEDNN_GEMM (kernels/cpu/onednn_route.h): the three values, unset and empty as auto, and an unknown value
// refused with the variable, the value and the valid ones in the message; and the route as a pure function of the
// setting, OpenBLAS's core and oneDNN's instruction sets, with the shapes each route covers.
#include "kernels/cpu/onednn_route.h"

#include <string>

#include "core/common/error.h"
#include "gtest/gtest.h"

namespace sluice::kernels {
namespace {

TEST(OnednnRouteTest, ParsesEachValue) {
  EXPECT_EQ(parse_onednn_route(nullptr), OnednnRoute::kAuto);
  EXPECT_EQ(parse_onednn_route(""), OnednnRoute::kAuto);
  EXPECT_EQ(parse_onednn_route("auto"), OnednnRoute::kAuto);
  EXPECT_EQ(parse_onednn_route("on"), OnednnRoute::kOn);
  EXPECT_EQ(parse_onednn_route("off"), OnednnRoute::kOff);
}

TEST(OnednnRouteTest, AnUnknownValueIsNamed) {
  try {
    parse_onednn_route("yes");
    FAIL() << "\"yes\" was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    const std::string message = error.what();
    EXPECT_NE(message.find("SLUICE_ONEDNN_GEMM=\"yes\""), std::string::npos) << message;
    EXPECT_NE(message.find("auto, on, off"), std::string::npos) << message;
  }
}

TEST(OnednnRouteTest, OpenBlasFallbackCoresAreTheOnesWithoutAvx2) {
  for (const char* fallback : {"Prescott", "PRESCOTT", "Core2", "Nehalem", "Sandybridge", "Barcelona"}) {
    EXPECT_TRUE(openblas_core_is_fallback(fallback)) << fallback;
  }
  for (const char* own : {"Haswell", "SkylakeX", "CooperLake", "SapphireRapids", "Zen", "neoversen1", "", "?"}) {
    EXPECT_FALSE(openblas_core_is_fallback(own)) << own;
  }
  EXPECT_FALSE(openblas_core_is_fallback(nullptr));
}

// Issue 29's machine: an Emerald Rapids (AVX-512) on which OpenBLAS 0.3.21 runs Prescott's kernels.
TEST(OnednnRouteTest, AutoRoutesEveryProductWhereOpenBlasRunsAFallbackCore) {
  EXPECT_EQ(gemm_route_for(OnednnRoute::kAuto, "Prescott", true, true), GemmRoute::kAll);
  EXPECT_EQ(gemm_route_for(OnednnRoute::kAuto, "Nehalem", true, false), GemmRoute::kAll) << "AVX2 without AVX-512";
  // OpenBLAS's own kernels: the measured large-product route on AVX-512, OpenBLAS alone below it.
  EXPECT_EQ(gemm_route_for(OnednnRoute::kAuto, "SkylakeX", true, true), GemmRoute::kLarge);
  EXPECT_EQ(gemm_route_for(OnednnRoute::kAuto, "Haswell", true, false), GemmRoute::kNone);
  // A real pre-AVX2 CPU: oneDNN has no faster kernels there either.
  EXPECT_EQ(gemm_route_for(OnednnRoute::kAuto, "Prescott", false, false), GemmRoute::kNone);
  EXPECT_EQ(gemm_route_for(OnednnRoute::kAuto, nullptr, true, true), GemmRoute::kLarge);
}

TEST(OnednnRouteTest, OnAndOffOverrideTheMachine) {
  for (const char* core : {"Prescott", "SkylakeX", "Haswell"}) {
    for (bool isa : {false, true}) {
      EXPECT_EQ(gemm_route_for(OnednnRoute::kOn, core, isa, isa), GemmRoute::kAll) << core;
      EXPECT_EQ(gemm_route_for(OnednnRoute::kOff, core, isa, isa), GemmRoute::kNone) << core;
    }
  }
}

TEST(OnednnRouteTest, EachRouteCoversItsShapes) {
  // x W^T and dy W with a 1024-wide weight; dy^T x; small products; the attention's per-head scores.
  EXPECT_TRUE(gemm_route_covers(GemmRoute::kLarge, false, true, 32, 1024, 1024));
  EXPECT_TRUE(gemm_route_covers(GemmRoute::kLarge, false, false, 32, 1024, 1024));
  EXPECT_FALSE(gemm_route_covers(GemmRoute::kLarge, true, false, 1024, 1024, 32));
  EXPECT_FALSE(gemm_route_covers(GemmRoute::kLarge, false, true, 36, 33, 17));
  EXPECT_FALSE(gemm_route_covers(GemmRoute::kLarge, false, false, 32, 1024, 10));
  EXPECT_FALSE(gemm_route_covers(GemmRoute::kLarge, false, true, 64, 64, 32));
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      EXPECT_TRUE(gemm_route_covers(GemmRoute::kAll, ta, tb, 64, 64, 32));
      EXPECT_TRUE(gemm_route_covers(GemmRoute::kAll, ta, tb, 1, 1, 1));
      EXPECT_FALSE(gemm_route_covers(GemmRoute::kNone, ta, tb, 32, 1024, 1024));
    }
  }
  EXPECT_STREQ(gemm_route_text(GemmRoute::kAll), "oneDNN");
  EXPECT_STREQ(gemm_route_text(GemmRoute::kNone), "OpenBLAS");
}

}  // namespace
}  // namespace sluice::kernels
