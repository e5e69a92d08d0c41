// `sluice inspect FILE|DIR [--json]`: step, layout at save time, layers and parameter sizes, checksum status.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::tools {

// Adds the `inspect` subcommand. It needs no MPI (the file is read by this process alone). A file that cannot be
// opened, or whose checksums fail, ends in Error(kCheckpoint) naming file and dataset after the report is printed.
void register_inspect_command(CLI::App& app);

}  // namespace sluice::tools
