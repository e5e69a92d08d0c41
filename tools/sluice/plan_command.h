// `sluice plan`: generate (or load) a pipeline schedule, lower it, validate it, simulate it and print it as a
// terminal timeline with a summary, JSON, SVG or Chrome-trace JSON.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::tools {

// Adds the `plan` subcommand. Bad arguments end in sluice::Error(kInvalidArgument) (main() exits with 2);
// an output file that cannot be written ends in Error(kIo).
void register_plan_command(CLI::App& app);

}  // namespace sluice::tools
