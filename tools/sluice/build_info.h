// What `sluice --version` prints: the version and how this binary was compiled, so a user (and
// tests/capi:installed_sluice_command_test) can tell an installed, optimized build from a debug one.
#pragma once

#include <string>

#include "core/common/version.h"

namespace sluice::tools {

// "sluice 0.1.0 (optimized build, bazel -c fastbuild, assertions on)". The compilation mode comes from the BUILD
// file (SLUICE_COMPILATION_MODE); "optimized" from the compiler itself (__OPTIMIZE__: any -O level above 0).
inline std::string version_text() {
#ifdef __OPTIMIZE__
  const std::string optimization = "optimized build";
#else
  const std::string optimization = "unoptimized build";
#endif
#ifdef SLUICE_COMPILATION_MODE
  const std::string mode = std::string(", bazel -c ") + SLUICE_COMPILATION_MODE;
#else
  const std::string mode;
#endif
#ifdef NDEBUG
  const std::string assertions = ", assertions off";
#else
  const std::string assertions = ", assertions on";
#endif
  return std::string("sluice ") + kVersion + " (" + optimization + mode + assertions + ")";
}

}  // namespace sluice::tools
