#include "slurm/sbatch_script.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

#include "core/common/error.h"
#include "core/common/message_text.h"
#include "core/config/domain_layout.h"
#include "slurm/placeholders.h"
#include "slurm/shell_quote.h"
#include "slurm/templates/embedded_templates.h"

namespace sluice::slurm {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw Error(ErrorCode::kInvalidArgument, message);
}

// Option values are checked with plain character scans, never std::regex: its matcher recurses once per
// character, so a value of some 30,000 characters overflowed the stack (SIGSEGV, issue 28).
bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_ascii_alnum(char c) { return is_ascii_digit(c) || is_ascii_lower(c) || (c >= 'A' && c <= 'Z'); }

// Whether `text` is non-empty and each character is an ASCII letter or digit or one of `others`.
bool is_word(std::string_view text, std::string_view others) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_ascii_alnum(c) && others.find(c) == std::string_view::npos) return false;
  }
  return true;
}

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_ascii_digit(c)) return false;
  }
  return true;
}

// A run of digits as a number, saturating at 10^12 (beyond any time limit; keeps the arithmetic below in range).
long saturated_number(std::string_view digits) {
  constexpr long kCap = 1000000000000L;
  long value = 0;
  for (char c : digits) value = std::min(kCap, value * 10 + (c - '0'));
  return value;
}

// Seconds of a --time "D-HH:MM:SS" or "HH:MM:SS" (hours any number of digits, minutes and seconds 00-59);
// nullopt for anything else.
std::optional<long> time_limit_seconds(std::string_view time) {
  long days = 0;
  const size_t dash = time.find('-');
  if (dash != std::string_view::npos) {
    if (!all_digits(time.substr(0, dash))) return std::nullopt;
    days = saturated_number(time.substr(0, dash));
    time.remove_prefix(dash + 1);
  }
  const size_t n = time.size();
  if (n < 7 || time[n - 6] != ':' || time[n - 3] != ':') return std::nullopt;
  const std::string_view hours = time.substr(0, n - 6), minutes = time.substr(n - 5, 2), seconds = time.substr(n - 2);
  if (!all_digits(hours) || !all_digits(minutes) || !all_digits(seconds) || minutes[0] > '5' || seconds[0] > '5') {
    return std::nullopt;
  }
  return ((days * 24 + saturated_number(hours)) * 60 + saturated_number(minutes)) * 60 + saturated_number(seconds);
}

// `--set` overrides, quoted for the script's srun line.
std::string train_arguments(const SbatchRequest& request) {
  std::string arguments;
  for (const std::string& override_text : request.overrides) {
    if (!arguments.empty()) arguments += ' ';
    arguments += "--set " + shell_quote(override_text);
  }
  return arguments;
}

// The job step's shell variables (the script's header) and its command line after `srun --mpi=pmix`.
std::string step_setup(const SbatchRequest& request) {
  if (request.program_path.empty()) {
    return "sluice=" + shell_quote(request.sluice_path) + "\nconfig=" + shell_quote(request.config_path);
  }
  return "program=" + shell_quote(request.program_path) +
         "\n# The config `sluice submit --config` checked, for the program to read (sluice_trainer_create takes a path).\n"
         "export SLUICE_CONFIG=" + shell_quote(request.config_path);
}

std::string step_command(const SbatchRequest& request) {
  if (request.program_path.empty()) {
    std::string command = "\"$sluice\" train \"$config\" --auto-resume";
    const std::string arguments = train_arguments(request);
    if (!arguments.empty()) command += " " + arguments;
    return command;
  }
  std::string command = "\"$program\"";
  for (const std::string& argument : request.program_args) command += " " + shell_quote(argument);
  return command;
}

// "qos=long" and "--qos=long" both become "--qos=long".
std::string long_option(const std::string& option) {
  return option.rfind("--", 0) == 0 ? option : "--" + option;
}

// Directives the templates or submit's own options set: a second one would contradict them (sbatch takes the last
// #SBATCH of a name, or refuses the pair), so each is refused with the option that sets it.
const std::map<std::string, std::string>& directives_set_by_sluice() {
  static const std::map<std::string, std::string> owners = {
      {"job-name", "--job-name"}, {"nodes", "--nodes"}, {"ntasks", "the config (stages x data_parallel)"},
      {"ntasks-per-node", "--tasks-per-node"}, {"cpus-per-task", "--cpus-per-task"}, {"time", "--time"},
      {"signal", "--warning-seconds"}, {"requeue", "the template (requeue on preemption)"},
      {"no-requeue", "the template (requeue on preemption)"}, {"output", "--output-dir"},
      {"error", "--output-dir"}, {"open-mode", "the template (logs of a requeued run append)"},
      {"partition", "--partition"}, {"account", "--account"}, {"gpus-per-task", "--gpus"}, {"gpus", "--gpus"},
      {"gpus-per-node", "--gpus"}, {"gpus-per-socket", "--gpus"}, {"cpus-per-gpu", "--gpus"},
      {"array", "one job per checkpoint.dir (the tasks of an array would share it)"},
  };
  return owners;
}

// An --sbatch-option: a long option name (a lower-case letter, then lower-case letters, digits, '-'), optionally
// "=value" with characters sbatch takes on an #SBATCH line unquoted (constraints use & | [ ] *). The name, "" if
// `text` ("--" + option) is not of that form.
std::string sbatch_option_name(const std::string& text) {
  if (text.rfind("--", 0) != 0) return "";
  const size_t equals = text.find('=');
  const std::string name = text.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
  if (name.empty() || !is_ascii_lower(name[0])) return "";
  for (char c : name) {
    if (!is_ascii_lower(c) && !is_ascii_digit(c) && c != '-') return "";
  }
  if (equals != std::string::npos && !is_word(std::string_view(text).substr(equals + 1), "_./:+,@%=&|*[]-")) return "";
  return name;
}

void check_sbatch_option(const std::string& option) {
  const std::string name = sbatch_option_name(long_option(option));
  require(!name.empty(), "--sbatch-option \"" + shorten_for_message(option) +
                             "\" is not NAME or NAME=VALUE (a long sbatch option such as qos=long; VALUE without "
                             "spaces or quotes)");
  // sbatch also takes an unambiguous prefix of a long option (--sig for --signal): a prefix of an owned name counts.
  for (const auto& [owned, owner] : directives_set_by_sluice()) {
    if (owned.rfind(name, 0) != 0) continue;
    const bool has_option = owner.rfind("--", 0) == 0;
    require(false, "--sbatch-option \"" + shorten_for_message(option) + "\": --" + owned + " is set by " + owner +
                       (has_option ? "; use that option instead" : "; edit the script from --dry-run to change it"));
  }
}

// #SBATCH lines for the optional choices, each with the comment the templates promise for every directive.
std::string extra_directives(const SbatchRequest& request) {
  std::string lines;
  if (!request.partition.empty()) {
    lines += "# Partition (queue), from `sluice submit --partition`.\n#SBATCH --partition=" + request.partition + "\n";
  }
  if (!request.account.empty()) {
    lines += "# Account charged for the job, from `sluice submit --account`.\n#SBATCH --account=" + request.account + "\n";
  }
  if (lines.empty()) lines = "# No --partition or --account given: the cluster's defaults apply.\n";
  if (!request.sbatch_options.empty()) lines += "# From `sluice submit --sbatch-option`.\n";
  for (const std::string& option : request.sbatch_options) lines += "#SBATCH " + long_option(option) + "\n";
  lines.pop_back();  // the template line itself ends the last one
  return lines;
}

// sbatch reads #SBATCH lines itself, without a shell: a value there cannot be quoted.
void require_sbatch_word(const std::string& value, const std::string& option) {
  require(is_word(value, "_./:+,-"), option + " \"" + shorten_for_message(value) +
                                         "\" cannot go on an #SBATCH line: use only letters, digits and _ . / : + , -");
}

// An MPI world size is an int: a product beyond it names the numbers (in 64 bits), not a wrapped-around count.
// "pipeline.stages (S) x pipeline.data_parallel (R) [x pipeline.domain's B blocks] = N tasks", for messages.
std::string task_origin(const config::Config& config, int64_t tasks) {
  const int64_t replicas_and_stages =
      static_cast<int64_t>(config.pipeline.stages) * std::max(config.pipeline.data_parallel, 1);
  const int64_t blocks = replicas_and_stages > 0 ? job_task_count(config) / replicas_and_stages : 1;
  return "pipeline.stages (" + std::to_string(config.pipeline.stages) + ") x pipeline.data_parallel (" +
         std::to_string(std::max(config.pipeline.data_parallel, 1)) + ")" +
         (blocks > 1 ? " x pipeline.domain's " + std::to_string(blocks) + " blocks" : std::string()) + " = " +
         std::to_string(tasks) + " tasks";
}

int checked_task_count(const config::Config& config) {
  const int64_t tasks = job_task_count(config);
  require(tasks <= std::numeric_limits<int>::max(),
          task_origin(config, tasks) + ", more than an MPI job can have (" + std::to_string(std::numeric_limits<int>::max()) + ")");
  return static_cast<int>(tasks);
}

// A fixed node count: the config's ranks must fit it, and every node must get some.
void check_fixed_nodes(const SbatchRequest& request, const config::Config& config, int tasks, int per_node) {
  require(static_cast<long>(request.nodes) * per_node >= tasks,
          task_origin(config, tasks) + " do not fit --nodes " + std::to_string(request.nodes) + " x --tasks-per-node " +
              std::to_string(per_node) + " = " + std::to_string(static_cast<int64_t>(request.nodes) * per_node) + " slots");
  require(request.nodes <= tasks,
          "--nodes " + std::to_string(request.nodes) + " is more than the " + task_origin(config, tasks) +
              ": some nodes would idle");
}

// A node range: the ranks follow the nodes Slurm grants (tasks_per_node on each), so the config must leave the
// replica count to them, and every node count in the range must give whole pipelines. Two consecutive counts
// differ by tasks_per_node ranks, so that holds exactly when tasks_per_node is a multiple of pipeline.stages.
void check_node_range(const SbatchRequest& request, const config::Config& config) {
  const std::string range =
      "--nodes " + std::to_string(request.min_nodes) + "-" + std::to_string(request.nodes) + " (a range)";
  require(request.tasks_per_node > 0, range + " needs --tasks-per-node: the ranks on each node stay fixed and their "
                                              "total follows the nodes the job gets");
  require(config.pipeline.data_parallel == 0,
          range + " needs pipeline.data_parallel unset (derived from the ranks), but it is " +
              std::to_string(config.pipeline.data_parallel) + ": a job on fewer nodes could not start");
  require(request.tasks_per_node % config.pipeline.stages == 0,
          range + " needs --tasks-per-node to be a multiple of pipeline.stages (" +
              std::to_string(config.pipeline.stages) + "), got " + std::to_string(request.tasks_per_node) + ": on " +
              std::to_string(request.min_nodes) + " node(s) the job would have " +
              std::to_string(static_cast<int64_t>(request.min_nodes) * request.tasks_per_node) +
              " ranks or on one more node a count that is not whole pipelines");
}

void check_request(const SbatchRequest& request, const config::Config& config, int tasks, int per_node) {
  require(request.nodes >= 1, "--nodes must be at least 1, got " + std::to_string(request.nodes));
  require(request.tasks_per_node >= 0,
          "--tasks-per-node must be at least 1, got " + std::to_string(request.tasks_per_node));
  require(request.cpus_per_task >= 1, "--cpus-per-task must be at least 1, got " + std::to_string(request.cpus_per_task));
  if (request.min_nodes > 0) {
    check_node_range(request, config);
  } else {
    check_fixed_nodes(request, config, tasks, per_node);
  }
  const std::optional<long> time_limit = time_limit_seconds(request.time);
  require(time_limit.has_value(), "--time \"" + shorten_for_message(request.time) + "\" is not HH:MM:SS or D-HH:MM:SS");
  // One template for the whole job: a pipeline with any cuda stage takes the GPU one, so its cpu stages get a
  // GPU each too (unused; Slurm's heterogeneous jobs would avoid that, but srun would then need one step per
  // component).
  using config::DeviceKind;
  if (request.gpus) {
    require(config.any_stage_on(DeviceKind::kCuda),
            "--gpus was given but the config's device is \"cpu\" on every stage: set device: cuda (or --set "
            "device=cuda, or a list with cuda for some stages)");
  } else {
    const std::string where = config.any_stage_on(DeviceKind::kCpu) ? " on some stages" : "";
    require(!config.any_stage_on(DeviceKind::kCuda),
            "the config's device is cuda" + where + ": add --gpus to ask Slurm for GPUs");
  }
  // The templates exist to survive preemption: srun runs `train --auto-resume`, and a requeued job can only
  // resume from checkpoint.dir (without it, `train` stops on the warning signal with nothing saved, exit 1).
  require(!config.checkpoint.dir.empty(),
          "checkpoint.dir is not set: a Slurm job without checkpoints cannot survive preemption; "
          "add --set checkpoint.dir=DIR (a directory every node can reach)");
  require_sbatch_word(request.job_name, "job name");
  require_sbatch_word(request.output_dir, "--output-dir");
  if (!request.partition.empty()) require_sbatch_word(request.partition, "--partition");
  if (!request.account.empty()) require_sbatch_word(request.account, "--account");
  for (const std::string& option : request.sbatch_options) check_sbatch_option(option);
  // Below 10 s no step and checkpoint can finish; above a day the warning would come before most jobs start.
  require(request.warning_seconds >= 10 && request.warning_seconds <= 86400,
          "--warning-seconds must be between 10 and 86400, got " + std::to_string(request.warning_seconds));
  // A warning at or before the start would checkpoint, exit 75 and requeue the job forever without training.
  require(request.warning_seconds < *time_limit,
          "--warning-seconds " + std::to_string(request.warning_seconds) + " is not shorter than --time " +
              shorten_for_message(request.time) + ": the warning would come before the job could train");
  require(request.program_path.empty() || request.overrides.empty(),
          "--set overrides are arguments of `sluice train`; a --program reads its own config: edit the config file "
          "instead");
  const std::string& launched = request.program_path.empty() ? request.sluice_path : request.program_path;
  for (const auto* path : {&request.config_path, &launched, &request.output_dir}) {
    // The job starts in the submit directory, but a requeued or edited script may not: absolute only.
    require(!path->empty() && path->front() == '/', "path \"" + *path + "\" must be absolute in a batch script");
  }
}

// The node and task directives. A fixed count asks for exactly the config's ranks; a range asks for whole nodes
// without a task count (Slurm would keep a requeued job's count and wait for a lost node), and srun starts
// --ntasks-per-node ranks on each (srun_task_options).
std::string task_directives(const SbatchRequest& request, int tasks, int per_node) {
  if (request.min_nodes > 0) {
    return "# Between " + std::to_string(request.min_nodes) + " and " + std::to_string(request.nodes) +
           " nodes (`sluice submit --nodes MIN-MAX`): a job requeued after losing a node\n"
           "# starts again on the nodes that are left.\n"
           "#SBATCH --nodes=" + std::to_string(request.min_nodes) + "-" + std::to_string(request.nodes) + "\n"
           "# Whole nodes and no task count: Slurm keeps a requeued job's task count, which would wait for the lost\n"
           "# node. srun below starts " + std::to_string(per_node) + " ranks on each node the job got (block "
           "distribution:\n# consecutive ranks share a node) and pipeline.data_parallel follows (ranks / stages).\n"
           "#SBATCH --exclusive";
  }
  return "# Nodes to allocate.\n#SBATCH --nodes=" + std::to_string(request.nodes) +
         "\n# Total MPI ranks = pipeline.stages x pipeline.data_parallel (srun starts exactly this many).\n"
         "#SBATCH --ntasks=" + std::to_string(tasks) +
         "\n# At most this many ranks per node. Slurm's block distribution fills each node with consecutive ranks; "
         "with\n# pipeline.rank_order: auto Sluice then puts a stage's replicas on one node and lets stages span "
         "nodes (only\n# activations cross the network, not gradient sums), see docs/SLURM.md \"Placement\".\n"
         "#SBATCH --ntasks-per-node=" + std::to_string(per_node);
}

std::string srun_task_options(const SbatchRequest& request, int per_node) {
  return request.min_nodes > 0 ? " --ntasks-per-node=" + std::to_string(per_node) : "";
}

// One GPU per rank: per task for a fixed task count; per node (one for each of its ranks) in a range, where
// there is no task count to attach GPUs to.
std::string gpu_request(const SbatchRequest& request, int per_node) {
  return request.min_nodes > 0 ? "gpus-per-node=" + std::to_string(per_node) : "gpus-per-task=1";
}

}  // namespace

void set_node_count(const std::string& text, SbatchRequest& request) {
  const size_t dash = text.find('-');
  const std::string_view low = std::string_view(text).substr(0, dash);
  const std::string_view high = dash == std::string::npos ? "" : std::string_view(text).substr(dash + 1);
  require(all_digits(low) && (dash == std::string::npos || all_digits(high)),
          "--nodes \"" + shorten_for_message(text) + "\" is not a node count N or a range MIN-MAX (e.g. 2 or 1-2)");
  // Beyond an int no cluster has the nodes: clamp, and the checks against the tasks refuse it.
  const auto count = [](std::string_view digits) {
    return static_cast<int>(std::min<long>(saturated_number(digits), std::numeric_limits<int>::max()));
  };
  if (dash == std::string::npos) {
    request.nodes = count(low);
    request.min_nodes = 0;
    return;
  }
  const int min_nodes = count(low), max_nodes = count(high);
  require(min_nodes >= 1, "--nodes " + text + ": a job needs at least 1 node");
  require(min_nodes <= max_nodes, "--nodes " + text + ": MIN (" + std::to_string(min_nodes) + ") is more than MAX (" +
                                      std::to_string(max_nodes) + ")");
  request.nodes = max_nodes;
  request.min_nodes = min_nodes == max_nodes ? 0 : min_nodes;
}

int64_t job_task_count(const config::Config& config) {
  // pipeline.domain: each stage of each replica runs on one rank per block (the trainer's rule, make_layout).
  return static_cast<int64_t>(config.pipeline.stages) * std::max(config.pipeline.data_parallel, 1) *
         config::domain_block_count(config.pipeline.domain);
}

int tasks_per_node_for(const SbatchRequest& request, int tasks) {
  if (request.tasks_per_node > 0 || request.nodes < 1) return request.tasks_per_node;
  return (tasks + request.nodes - 1) / request.nodes;
}

std::string render_sbatch_script(const SbatchRequest& request, const config::Config& config) {
  const int tasks = checked_task_count(config);
  const int per_node = tasks_per_node_for(request, tasks);
  check_request(request, config, tasks, per_node);
  std::map<std::string, std::string> values = {
      {"JOB_NAME", request.job_name},
      {"TASK_DIRECTIVES", task_directives(request, tasks, per_node)},
      {"SRUN_MPI", srun_mpi_choices().name_of(request.srun_mpi)},
      {"SRUN_TASK_OPTIONS", srun_task_options(request, per_node)},
      {"CPUS_PER_TASK", std::to_string(request.cpus_per_task)},
      {"TIME", request.time},
      {"WARNING_SECONDS", std::to_string(request.warning_seconds)},
      {"OUTPUT_DIR", request.output_dir},
      {"EXTRA_DIRECTIVES", extra_directives(request)},
      {"STEP_SETUP", step_setup(request)},
      {"STEP_COMMAND", step_command(request)},
  };
  if (request.gpus) values["GPU_REQUEST"] = gpu_request(request, per_node);
  return fill_placeholders(request.gpus ? kGpuSbatchTemplate : kCpuSbatchTemplate, values);
}

std::string mpirun_command(const SbatchRequest& request, const config::Config& config) {
  const int64_t ranks = request.min_nodes > 0 ? static_cast<int64_t>(request.nodes) * request.tasks_per_node
                                              : checked_task_count(config);
  std::string command = "mpirun --mca odls_base_sigkill_timeout 30 -np " + std::to_string(ranks) + " ";
  if (!request.program_path.empty()) {
    command = "SLUICE_CONFIG=" + shell_quote(request.config_path) + " " + command + shell_quote(request.program_path);
    for (const std::string& argument : request.program_args) command += " " + shell_quote(argument);
    return command;
  }
  command += shell_quote(request.sluice_path) + " train " + shell_quote(request.config_path) + " --auto-resume";
  const std::string arguments = train_arguments(request);
  if (!arguments.empty()) command += " " + arguments;
  return command;
}

}  // namespace sluice::slurm
