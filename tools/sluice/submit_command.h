// `sluice submit CONFIG.yaml --nodes N [--tasks-per-node T] [--cpus-per-task C] [--gpus] [--time HH:MM:SS]
//  [--partition P] [--account A] [--job-name NAME] [--set key=value ...] [--sluice PATH] [--output-dir D]
//  [--dry-run] [--wait]`: fills an sbatch template for the config and submits it (see docs/SLURM.md).
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::tools {

void register_submit_command(CLI::App& app);

}  // namespace sluice::tools
