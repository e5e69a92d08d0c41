// Turns a parsed Sluice config plus the user's Slurm choices into a complete sbatch script, from the
// templates in slurm/templates/ (compiled in). Pure: no file system, no Slurm; `sluice submit` does the I/O.
#pragma once

#include <cstdint>

#include <string>
#include <vector>

#include "core/config/config.h"
#include "slurm/srun_mpi.h"

namespace sluice::slurm {

struct SbatchRequest {
  std::string config_path;             // absolute path of the YAML config the job trains
  std::vector<std::string> overrides;  // `key.path=value`, forwarded to `sluice train --set`
  std::string sluice_path;             // absolute path of the `sluice` binary on the compute nodes
  // `sluice submit --program`: the job step runs this program (absolute path) with program_args instead of
  // `sluice train`; the config is still parsed for the rank count and checkpoint.dir, and exported to the
  // program as SLUICE_CONFIG. Empty: `sluice train CONFIG --auto-resume`. overrides must then be empty.
  std::string program_path;
  std::vector<std::string> program_args;
  std::string output_dir;              // absolute directory for the job's .out/.err logs
  std::string job_name;                // letters, digits, _ . - only
  int nodes = 1;  // with min_nodes: the most nodes of a range
  // `--nodes MIN-MAX`: MIN, the fewest nodes the job may run on (0: exactly `nodes`). Slurm keeps a requeued job's
  // task count, so a range asks for whole nodes (--exclusive) without a task count, and srun starts tasks_per_node
  // ranks on each node the job got: after a node is lost the requeued job can start on fewer nodes with fewer
  // ranks, pipeline.data_parallel derived from them.
  int min_nodes = 0;
  int tasks_per_node = 0;  // 0: as few per node as fit, ceil(tasks / nodes); required with a range
  int cpus_per_task = 1;
  SrunMpi srun_mpi = SrunMpi::kPmix;  // `srun --mpi=`: the plugin for the MPI the ranks are linked with
  bool gpus = false;  // one GPU per rank, from the GPU template
  std::string time = "01:00:00";
  std::string partition;  // empty: the cluster's default
  std::string account;    // empty: the user's default
  // Seconds between Slurm's warning signal (SIGUSR1 to the batch shell) and the time limit: the ranks must finish
  // their step and write a checkpoint in this time.
  int warning_seconds = 120;
  // Further #SBATCH directives, `name` or `name=value` (a leading "--" is optional), e.g. "qos=long", "mem=0",
  // "constraint=intel&ib", "exclusive". Names the script sets itself are refused (they have their own options).
  std::vector<std::string> sbatch_options;
};

// MPI ranks the job needs: pipeline.stages x pipeline.data_parallel (data_parallel 0, "derive it", counts as 1) x
// the blocks of pipeline.domain (their product; none = 1).
int64_t job_task_count(const config::Config& config);  // in 64 bits: the product may not fit an int

// `--nodes` text, "N" or "MIN-MAX", into request.nodes and request.min_nodes ("N": min_nodes 0). Throws
// sluice::Error(kInvalidArgument) naming --nodes for anything else (signs, spaces, an empty side, MIN > MAX).
void set_node_count(const std::string& text, SbatchRequest& request);

// Ranks per node the script asks for: request.tasks_per_node, or ceil(tasks / nodes) when that is 0.
int tasks_per_node_for(const SbatchRequest& request, int tasks);

// The filled script. Throws sluice::Error(kInvalidArgument) naming the option when the request is
// inconsistent: nodes/tasks-per-node/cpus-per-task < 1, tasks that do not fit nodes x tasks-per-node, more
// nodes than tasks, a node range (--nodes MIN-MAX) without --tasks-per-node or with pipeline.data_parallel set or
// with a node count in it whose ranks are not a multiple of pipeline.stages, a malformed --time, a job name or output directory sbatch cannot take in an #SBATCH line,
// --gpus with device cpu on every stage or a cuda stage without --gpus, an empty checkpoint.dir (after --set), or
// a relative path, or --set overrides with a program (they are `sluice train` arguments), --warning-seconds outside
// 10..86400, or an --sbatch-option that is malformed, short-form, or names a directive the script sets itself.
std::string render_sbatch_script(const SbatchRequest& request, const config::Config& config);

// The equivalent launch without Slurm, for messages: `mpirun --mca odls_base_sigkill_timeout 30 -np N SLUICE train
// CONFIG --auto-resume ...` (or PROGRAM ARGS...), with the ranks of the most nodes for a node range. The MCA setting gives the ranks 30 s between mpirun's SIGTERM
// and its SIGKILL (Open MPI's default is 1 s: too short to write a checkpoint).
std::string mpirun_command(const SbatchRequest& request, const config::Config& config);

}  // namespace sluice::slurm
