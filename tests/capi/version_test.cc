// The version has one source, the VERSION file; the header's macros, the built library's sluice_version() and the
// C++ writer string are generated from it (version.bzl). Each is checked here against the file's own text, so a
// generator that drops or garbles a number fails (comparing sluice_version() with SLUICE_VERSION alone could not:
// the library returns that same macro).
#include <gtest/gtest.h>
#include <sluice/sluice.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

#include "core/common/version.h"

namespace {

// VERSION from the test's runfiles (data = ["//:VERSION"]), without surrounding white space.
std::string version_file_text() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return "";
  std::ifstream in(std::string(srcdir) + "/" + workspace + "/VERSION");
  std::string text;
  std::getline(in, text);
  const auto first = text.find_first_not_of(" \t\r");
  const auto last = text.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

struct Version {
  int major = -1, minor = -1, patch = -1;
};

Version parse(const std::string& text) {
  std::smatch match;
  Version v;
  if (std::regex_match(text, match, std::regex(R"(([0-9]+)\.([0-9]+)\.([0-9]+))"))) {
    v.major = std::stoi(match[1]);
    v.minor = std::stoi(match[2]);
    v.patch = std::stoi(match[3]);
  }
  return v;
}

TEST(Version, HeaderMacrosAreTheVersionFile) {
  const std::string text = version_file_text();
  const Version v = parse(text);
  ASSERT_GE(v.major, 0) << "VERSION is not MAJOR.MINOR.PATCH: '" << text << "'";
  EXPECT_EQ(SLUICE_VERSION_MAJOR, v.major);
  EXPECT_EQ(SLUICE_VERSION_MINOR, v.minor);
  EXPECT_EQ(SLUICE_VERSION_PATCH, v.patch);
  EXPECT_EQ(SLUICE_VERSION, v.major * 10000 + v.minor * 100 + v.patch);
}

TEST(Version, LibraryReportsTheVersionFile) {
  const Version v = parse(version_file_text());
  ASSERT_GE(v.major, 0);
  EXPECT_EQ(sluice_version(), v.major * 10000 + v.minor * 100 + v.patch);
  EXPECT_EQ(sluice_version(), SLUICE_VERSION);
}

TEST(Version, CheckpointWriterNamesTheVersionFile) {
  const std::string text = version_file_text();
  EXPECT_EQ(std::string(sluice::kVersion), text);
  EXPECT_EQ(std::string(sluice::kSluiceWriter), "sluice " + text);
}

}  // namespace
