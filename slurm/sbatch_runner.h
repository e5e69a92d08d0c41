// Runs Slurm's `sbatch` on a written script. Kept apart from script rendering so that rendering stays pure.
#pragma once

#include <string>

namespace sluice::slurm {

// Absolute path of `program` found through $PATH, or "" when it is not there (Slurm not installed).
std::string find_on_path(const std::string& program);

// Runs `sbatch_path [--wait] script_path` with this process's stdout/stderr and returns its exit status
// (with --wait: the batch script's). Throws sluice::Error(kIo) when it cannot be started or dies by a signal.
int run_sbatch(const std::string& sbatch_path, const std::string& script_path, bool wait);

}  // namespace sluice::slurm
