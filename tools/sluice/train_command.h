// `sluice train CONFIG.yaml [--set key.path=value ...] [--json] [--trace FILE] [--resume FILE|DIR]`, run
// under mpirun or srun: one process per rank.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::tools {

void register_train_command(CLI::App& app);

}  // namespace sluice::tools
