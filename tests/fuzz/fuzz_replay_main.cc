// main() for a fuzz target built without libFuzzer (every configuration but --config=fuzz, e.g. with gcc): runs
// LLVMFuzzerTestOneInput once on every file named on the command line or found directly in a named directory,
// so the seed corpus and any committed reproducer are a regression test in every configuration. Arguments that
// start with '-' are libFuzzer flags and are ignored, so fuzz_test.sh can call both builds the same way.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int run_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "fuzz replay: cannot read %s\n", path.c_str());
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int inputs = 0;
  int unreadable = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;
    std::error_code ignored;
    if (std::filesystem::is_directory(arg, ignored)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (!entry.is_regular_file()) continue;
        unreadable += run_file(entry.path());
        ++inputs;
      }
    } else {
      unreadable += run_file(arg);
      ++inputs;
    }
  }
  std::fprintf(stderr, "fuzz replay: %d inputs run, %d unreadable\n", inputs, unreadable);
  // No input at all means a wrong path in the BUILD file: fail rather than pass having tested nothing.
  return (inputs == 0 || unreadable > 0) ? 1 : 0;
}
