#include "tools/sluice/inspect_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "checkpoint/summary.h"
#include "core/common/error.h"
#include "tools/sluice/layer_types.h"

namespace sluice::tools {
namespace {

struct InspectOptions {
  std::string path;
  bool json = false;
};

void run_inspect(const InspectOptions& options) {
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

}  // namespace

void register_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* inspect = app.add_subcommand(
      "inspect", "Show a checkpoint's step, save-time layout, layers and parameter sizes; verify every checksum");
  inspect->add_option("checkpoint", options->path, "checkpoint file, or a directory (meaning its latest checkpoint)")
      ->required();
  inspect->add_flag("--json", options->json, "print one JSON object instead of text");
  inspect->callback([options] { run_inspect(*options); });
}

}  // namespace sluice::tools
