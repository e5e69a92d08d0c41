// Config section `comm` (comm.timeout, comm.arrival_timeout, comm.wait): defaults, values, --set overrides, and
// errors that name the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"

namespace sluice::config {
namespace {

const std::string kBase = R"(model:
  inputs: 4
  layers:
    - {type: linear, outputs: 2}
data: {type: synthetic, batch: 8}
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

TEST(CommConfig, DefaultsBoundStepsWaitWithoutSpinningAndLeaveArrivalToTheClient) {
  const Config config = parse_config(kBase);
  EXPECT_EQ(config.comm.timeout, 600.0);
  EXPECT_LT(config.comm.arrival_timeout, 0.0);
  EXPECT_EQ(config.comm.wait, WaitPolicy::kAuto);
}

TEST(CommConfig, ReadsEveryKey) {
  const Config config = parse_config(kBase + "comm: {timeout: 2.5, arrival_timeout: 0, wait: block}\n");
  EXPECT_EQ(config.comm.timeout, 2.5);
  EXPECT_EQ(config.comm.arrival_timeout, 0.0);
  EXPECT_EQ(config.comm.wait, WaitPolicy::kBlock);
}

TEST(CommConfig, SetOverridesWork) {
  const Config config = parse_config(kBase, {"comm.timeout=0", "comm.wait=spin"});
  EXPECT_EQ(config.comm.timeout, 0.0);
  EXPECT_EQ(config.comm.wait, WaitPolicy::kSpin);
  EXPECT_EQ(parse_config(kBase, {"comm.wait=adaptive"}).comm.wait, WaitPolicy::kAdaptive);
}

TEST(CommConfig, ErrorsNameTheKey) {
  std::string e = config_error(kBase + "comm: {timeout: -1}\n");
  EXPECT_NE(e.find("comm.timeout"), std::string::npos) << e;
  EXPECT_NE(e.find("seconds"), std::string::npos) << e;
  e = config_error(kBase + "comm: {arrival_timeout: soon}\n");
  EXPECT_NE(e.find("comm.arrival_timeout"), std::string::npos) << e;
  e = config_error(kBase + "comm: {wait: sleep}\n");
  EXPECT_NE(e.find("comm.wait"), std::string::npos) << e;
  EXPECT_NE(e.find("block"), std::string::npos) << e;  // lists the choices
  EXPECT_NE(e.find("adaptive"), std::string::npos) << e;
  e = config_error(kBase + "comm: {timeuot: 3}\n");
  EXPECT_NE(e.find("timeuot"), std::string::npos) << e;
}

}  // namespace
}  // namespace sluice::config
