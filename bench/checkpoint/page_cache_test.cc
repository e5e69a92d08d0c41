#include "bench/checkpoint/page_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::bench {
namespace {

std::string temporary_directory() {
  const char* bazel_tmp = std::getenv("TEST_TMPDIR");
  return bazel_tmp ? bazel_tmp : "/tmp";
}

// Writes size bytes and fsyncs them, so the pages are clean (only clean pages can be evicted).
std::string write_flushed_file(const std::string& name, size_t size) {
  const std::string path = temporary_directory() + "/" + name;
  {
    std::ofstream out(path, std::ios::binary);
    const std::vector<char> bytes(size, 'x');
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  FILE* file = std::fopen(path.c_str(), "rb");
  ::fsync(fileno(file));
  std::fclose(file);
  return path;
}

TEST(PageCacheTest, JustWrittenFileIsReportedResident) {
  const std::string path = write_flushed_file("resident.bin", 1 << 20);
  EXPECT_GT(resident_fraction(path), 0.5);
}

TEST(PageCacheTest, EvictionLeavesLessCachedThanReadingBack) {
  const std::string path = write_flushed_file("evicted.bin", 4 << 20);
  evict_from_page_cache(path);
  const double after_eviction = resident_fraction(path);
  // tmpfs keeps every page in memory by design, so only a real disk can show the drop.
  if (after_eviction == 1.0) GTEST_SKIP() << "file system of " << path << " does not evict (tmpfs?)";
  EXPECT_LT(after_eviction, 0.1);

  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes(4 << 20);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_GT(resident_fraction(path), 0.9);
}

TEST(PageCacheTest, EmptyFileIsNotResident) {
  EXPECT_EQ(resident_fraction(write_flushed_file("empty.bin", 0)), 0.0);
}

TEST(PageCacheTest, MissingFileIsAnIoErrorNamingIt) {
  const std::string missing = temporary_directory() + "/does_not_exist.bin";
  for (auto call : {+[](const std::string& p) { evict_from_page_cache(p); },
                    +[](const std::string& p) { resident_fraction(p); }}) {
    try {
      call(missing);
      FAIL() << "expected an Error for " << missing;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kIo);
      EXPECT_NE(std::string(error.what()).find(missing), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace sluice::bench
