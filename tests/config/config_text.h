// Config tests edit one valid YAML text per case: the first `from` replaced by `to`. A `from` that is not in the
// text is a broken test, reported as a failure (the text is then returned unchanged).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace sluice::config::testing {

inline std::string replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test setup: \"" << from << "\" not in the text";
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

}  // namespace sluice::config::testing
