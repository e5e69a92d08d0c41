// Fuzz target: `sluice inspect` on a checkpoint file (checkpoint/summary and reader, and the layer types read
// from the checkpoint's config text, tools/sluice/layer_types). HDF5 opens files, not buffers, so each input is
// written to one temp file of this process and inspected there, by the same calls as inspect_in_this_process()
// (tools/sluice/inspect_command.cc): summarize, fill_layer_types, then both report formats.
// Contract checked: a damaged or crafted file is a sluice::Error or a failed checksum in the summary; any other
// exception, crash or sanitizer report is a finding. Seeds: small real checkpoints (tests/fuzz/corpus/).
#include <hdf5.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "checkpoint/summary.h"
#include "core/common/error.h"
#include "tools/sluice/layer_types.h"

namespace {

// One file per process, created once, in TEST_TMPDIR/TMPDIR (the fuzzer runs inputs one after another).
const std::string& input_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TEST_TMPDIR");
    if (dir == nullptr) dir = std::getenv("TMPDIR");
    std::string name = std::string(dir != nullptr ? dir : "/tmp") + "/checkpoint_inspect_fuzz.XXXXXX";
    const int fd = mkstemp(name.data());
    if (fd < 0) {
      std::perror("checkpoint_inspect_fuzzer: mkstemp");
      std::abort();
    }
    close(fd);
    return name;
  }();
  return path;
}

bool write_input(const uint8_t* data, size_t size) {
  std::FILE* file = std::fopen(input_path().c_str(), "wb");
  if (file == nullptr) return false;
  const bool complete = std::fwrite(data, 1, size, file) == size;
  return std::fclose(file) == 0 && complete;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!write_input(data, size)) {
    std::perror("checkpoint_inspect_fuzzer: writing the input file");
    std::abort();  // an environment problem, not a finding: stop rather than fuzz nothing
  }
  try {
    sluice::checkpoint::CheckpointSummary summary = sluice::checkpoint::summarize(input_path());
    sluice::tools::fill_layer_types(summary);
    const std::string text = sluice::checkpoint::summary_text(summary);
    const std::string json = sluice::checkpoint::summary_json(summary);
    if (text.empty() || json.empty()) std::abort();  // a summary always names at least the file
  } catch (const sluice::Error&) {
    // Refused with the documented error.
  }
  // Every HDF5 handle our reader opened must be closed again, whatever the outcome (fuzz_test.sh counts leaks
  // inside HDF5 as upstream, so a handle we forget is caught here instead).
  const ssize_t open_objects = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (open_objects != 0) {
    std::fprintf(stderr, "checkpoint_inspect_fuzzer: %zd HDF5 objects still open after inspecting\n", open_objects);
    std::abort();
  }
  return 0;
}
