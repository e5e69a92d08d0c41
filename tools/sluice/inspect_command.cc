#include "tools/sluice/inspect_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "checkpoint/summary.h"
#include "core/common/error.h"
#include "tools/sluice/isolated_run.h"
#include "tools/sluice/layer_types.h"

namespace sluice::tools {
namespace {

struct InspectOptions {
  std::string path;
  bool json = false;
  double timeout_seconds = 1800;
};

void inspect_in_this_process(const InspectOptions& options) {
  checkpoint::CheckpointSummary summary = checkpoint::summarize(options.path);
  fill_layer_types(summary);
  if (options.json) {
    std::cout << checkpoint::summary_json(summary) << std::endl;
  } else {
    std::cout << checkpoint::summary_text(summary) << std::flush;
  }
  // The report goes out first so the user sees what is intact; the failure still decides the exit status.
  if (!summary.checksums_verified) throw Error(ErrorCode::kCheckpoint, summary.checksum_error);
}

// libhdf5 1.10.8 segfaults on some crafted files (tests/fuzz/hdf5_crashes) and may loop on others: the file is read
// in a forked child, so a crash or hang becomes a clear error naming the file (inspect initializes no MPI).
void run_inspect(const InspectOptions& options) {
  run_isolated([&] { inspect_in_this_process(options); }, options.path, options.timeout_seconds);
}

}  // namespace

void register_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* inspect = app.add_subcommand(
      "inspect", "Show a checkpoint's step, save-time layout, layers and parameter sizes; verify every checksum");
  inspect->add_option("checkpoint", options->path, "checkpoint file, or a directory (meaning its latest checkpoint)")
      ->required();
  inspect->add_flag("--json", options->json, "print one JSON object instead of text");
  inspect->add_option("--timeout", options->timeout_seconds,
                      "seconds to wait for the file to be read before the reading process is killed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  inspect->callback([options] { run_inspect(*options); });
}

}  // namespace sluice::tools
