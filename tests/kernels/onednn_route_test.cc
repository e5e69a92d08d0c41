// SLUICE_ONEDNN_GEMM (kernels/cpu/onednn_route.h): the three values, unset and empty as auto, and an unknown value
// refused with the variable, the value and the valid ones in the message.
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

}  // namespace
}  // namespace sluice::kernels
