#include "tools/sluice/submit_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/common/error.h"
#include "core/common/message_text.h"
#include "core/comm/mpi_library.h"
#include "core/config/config_parser.h"
#include "slurm/sbatch_runner.h"
#include "slurm/sbatch_script.h"
#include "tools/sluice/command_exit.h"

namespace sluice::tools {
namespace {

namespace fs = std::filesystem;

struct SubmitOptions {
  slurm::SbatchRequest request;
  std::string config;                     // --config
  std::vector<std::string> positionals;   // CONFIG for `sluice train`; the program's arguments with --program
  std::string program;                    // --program: run this instead of `sluice train`
  std::string nodes;                      // --nodes: N or MIN-MAX (slurm::set_node_count)
  std::string mpi;                        // --mpi: an srun MPI plugin name; empty: the one for the linked MPI
  std::string sluice_path;  // empty: this very binary
  std::string output_dir = ".";
  bool dry_run = false;
  bool wait = false;
};

// "sluice-" + the stem of the config file (or of --program), reduced to characters sbatch and file names take without quoting.
std::string default_job_name(const std::string& config_path) {
  return "sluice-" + std::regex_replace(fs::path(config_path).stem().string(), std::regex("[^A-Za-z0-9_.-]"), "_");
}

// Whether `path` lies in a Bazel output tree (bazel-bin, bazel-out, the execroot under ~/.cache/bazel): a binary
// there is replaced by the next build, may be a debug build, and often sits on a disk compute nodes do not see.
bool in_bazel_output_tree(const std::string& path) {
  for (const char* marker : {"/bazel-out/", "/execroot/", "/_bazel_", "/bazel-bin/"}) {
    if (path.find(marker) != std::string::npos) return true;
  }
  return false;
}

// The path the job runs `sluice` from when --sluice is not given: this very binary, resolved through /proc/self/exe
// (so an installed PREFIX/bin/sluice writes PREFIX/bin/sluice into the script).
std::string this_executable() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) throw Error(ErrorCode::kIo, "cannot find the sluice binary's path (/proc/self/exe); pass --sluice PATH");
  return self.string();
}

// Said once the script is made (a refused config gets its one-line error alone).
void warn_if_in_bazel_output_tree(const std::string& sluice_path) {
  if (!in_bazel_output_tree(sluice_path)) return;
  std::cerr << "sluice submit: warning: this sluice runs from Bazel's output tree (" << sluice_path
            << "), which the next build replaces and compute nodes may not see: install it with "
               "`bazel run //capi:install -- PREFIX` and run PREFIX/bin/sluice submit, or pass --sluice PATH"
            << std::endl;
}

// `--mpi NAME`, or without it the plugin for the MPI this binary is linked with (a --program is assumed to use
// the same MPI installation): PMI-2 for MPICH, PMIx otherwise.
slurm::SrunMpi srun_mpi_for(const std::string& name) {
  if (name.empty()) {
    return comm::linked_mpi_library() == comm::MpiLibrary::kMpich ? slurm::SrunMpi::kPmi2 : slurm::SrunMpi::kPmix;
  }
  if (const std::optional<slurm::SrunMpi> plugin = slurm::srun_mpi_choices().find(name)) return *plugin;
  throw Error(ErrorCode::kInvalidArgument, "--mpi \"" + shorten_for_message(name) + "\": unknown srun MPI plugin; expected " +
                                               slurm::srun_mpi_choices().names_text(" or "));
}

// Sorts the command line's words into the config and the program's arguments: `submit CONFIG` or
// `submit --config CONFIG` runs `sluice train`; `submit --program P --config CONFIG [--] ARGS...` runs P ARGS.
void resolve_words(SubmitOptions& options) {
  slurm::SbatchRequest& request = options.request;
  if (options.program.empty()) {
    if (options.config.empty() && options.positionals.size() == 1) {
      options.config = options.positionals.front();
    } else if (!options.positionals.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  options.config.empty() ? "give one config file (extra arguments are only for --program)"
                                         : "give the config either as an argument or with --config, not both "
                                           "(extra arguments are only for --program)");
    }
    if (options.config.empty()) throw Error(ErrorCode::kInvalidArgument, "no config file given");
    return;
  }
  if (options.config.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "--program needs --config CONFIG (the config the program trains with: its pipeline sets the rank "
                "count, its checkpoint.dir is required)");
  }
  const fs::path program = fs::absolute(options.program).lexically_normal();
  if (!fs::is_regular_file(program) || access(program.c_str(), X_OK) != 0) {
    throw Error(ErrorCode::kInvalidArgument, "--program \"" + options.program + "\" is not an executable file");
  }
  request.program_path = program.string();
  request.program_args = options.positionals;
}

void submit(SubmitOptions& options) {
  resolve_words(options);
  slurm::set_node_count(options.nodes, options.request);
  options.request.srun_mpi = srun_mpi_for(options.mpi);
  std::error_code not_checked;  // a name the file system refuses (too long, ...) is a missing file too
  if (!fs::is_regular_file(options.config, not_checked)) {
    throw Error(ErrorCode::kInvalidArgument, "config file \"" + shorten_for_message(options.config) + "\" does not exist");
  }
  slurm::SbatchRequest& request = options.request;
  request.config_path = fs::absolute(options.config).lexically_normal().string();
  request.output_dir = fs::absolute(options.output_dir).lexically_normal().string();
  if (request.output_dir.size() > 1 && request.output_dir.back() == '/') request.output_dir.pop_back();
  request.sluice_path = options.sluice_path.empty() ? this_executable()
                                                    : fs::absolute(options.sluice_path).lexically_normal().string();
  // With --program the job is named after the program (sluice-<program file name>).
  if (request.job_name.empty()) {
    request.job_name = default_job_name(options.program.empty() ? options.config : options.program);
  }

  const config::Config config = config::parse_config(request.config_path, request.overrides);
  const std::string script = slurm::render_sbatch_script(request, config);
  // Only a `sluice train` job runs this binary; a --program job runs the program.
  if (options.sluice_path.empty() && request.program_path.empty()) warn_if_in_bazel_output_tree(request.sluice_path);
  if (config.checkpoint.every == 0) {
    // Allowed (a job may only need to survive preemption), but a crash or node failure then loses all progress.
    std::cerr << "sluice submit: warning: checkpoint.every is 0: only preemption checkpoints will be written "
                 "(no periodic or final one); add --set checkpoint.every=K to save every K steps"
              << std::endl;
  }
  if (options.dry_run) {
    std::cout << script;
    return;
  }

  fs::create_directories(request.output_dir);
  const std::string script_path = request.output_dir + "/" + request.job_name + ".sbatch";
  std::ofstream file(script_path);
  file << script;
  file.close();
  if (!file) throw Error(ErrorCode::kIo, "cannot write the batch script " + script_path);
  std::cout << "sluice submit: wrote " << script_path << std::endl;

  const std::string sbatch = slurm::find_on_path("sbatch");
  if (sbatch.empty()) {
    throw Error(ErrorCode::kUnsupported, "Slurm not found (no sbatch on PATH); run with mpirun: " +
                                             slurm::mpirun_command(request, config));
  }
  const int status = slurm::run_sbatch(sbatch, script_path, options.wait);
  if (status != 0) {
    std::cerr << "sluice submit: sbatch exited with status " << status << std::endl;
    throw CommandExit{status};
  }
}

}  // namespace

void register_submit_command(CLI::App& app) {
  auto options = std::make_shared<SubmitOptions>();
  slurm::SbatchRequest& request = options->request;
  CLI::App* cmd = app.add_subcommand(
      "submit", "Fill an sbatch script for a config (`sluice train`, or --program) and submit it to Slurm");
  cmd->add_option("config", options->positionals,
                  "YAML config file; with --program: the program's arguments (put them after --)");
  cmd->add_option("--config", options->config, "YAML config file (required with --program)");
  cmd->add_option("--program", options->program,
                  "Run this program (e.g. a simulation on the C API) instead of `sluice train`; its arguments "
                  "follow --. The config is exported to it as SLUICE_CONFIG");
  cmd->add_option("--nodes", options->nodes,
                  "Nodes to allocate: N, or MIN-MAX for a job that a requeue may shrink after a node is lost (whole "
                  "nodes, --tasks-per-node ranks on each, pipeline.data_parallel derived from the ranks)")
      ->required();
  cmd->add_option("--tasks-per-node", request.tasks_per_node,
                  "Ranks per node (default: ceil(stages x data_parallel / nodes); required with --nodes MIN-MAX)");
  cmd->add_option("--mpi", options->mpi,
                  "srun's MPI plugin, pmix or pmi2 (default: the one for the MPI this sluice is linked with: pmix "
                  "for Open MPI, pmi2 for MPICH)");
  cmd->add_option("--cpus-per-task", request.cpus_per_task, "Cores per rank (default 1)");
  cmd->add_flag("--gpus", request.gpus, "One GPU per rank (GPU template; needs device: cuda on at least one stage)");
  cmd->add_option("--time", request.time, "Wall-clock limit, HH:MM:SS or D-HH:MM:SS (default 01:00:00)");
  cmd->add_option("--partition", request.partition, "Slurm partition");
  cmd->add_option("--account", request.account, "Slurm account");
  cmd->add_option("--warning-seconds", request.warning_seconds,
                  "Seconds between Slurm's warning (SIGUSR1) and the time limit: room for a step and a checkpoint "
                  "(default 120)");
  cmd->add_option("--sbatch-option", request.sbatch_options,
                  "Another #SBATCH directive, NAME or NAME=VALUE (repeatable), e.g. --sbatch-option qos=long "
                  "--sbatch-option mem=0")
      ->allow_extra_args(false);  // one value each: the config file after it stays positional
  cmd->add_option("--job-name", request.job_name, "Job name (default: sluice-<config file stem>)");
  cmd->add_option("--set", request.overrides, "Override a config key: key.path=value (repeatable), also passed to train")
      ->allow_extra_args(false);  // one value per --set, so a config file after it stays positional
  cmd->add_option("--sluice", options->sluice_path, "sluice binary the job runs (default: this one)");
  cmd->add_option("--output-dir", options->output_dir, "Where the script and the job's logs go (default .)");
  cmd->add_flag("--dry-run", options->dry_run, "Print the script instead of writing and submitting it");
  cmd->add_flag("--wait", options->wait, "Wait for the job to end (sbatch --wait) and exit with its status");
  cmd->callback([options] { submit(*options); });
}

}  // namespace sluice::tools
