// sbatch script rendering: directives derived from the config and the request, quoting, and every way a
// request can be wrong.
#include "slurm/sbatch_script.h"

#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"

namespace sluice::slurm {
namespace {

// `devices`: one for every stage, or one per stage.
config::Config pipeline_config(int stages, int data_parallel, std::vector<std::string> devices = {"cpu"}) {
  config::Config config;
  config.pipeline.stages = stages;
  config.pipeline.data_parallel = data_parallel;
  config.devices.clear();
  for (const std::string& device : devices) config.devices.push_back(*config::device_kinds().find(device));
  config.checkpoint.dir = "/scratch/ck";  // required for a Slurm job
  return config;
}

SbatchRequest basic_request() {
  SbatchRequest request;
  request.config_path = "/jobs/mlp.yaml";
  request.sluice_path = "/opt/sluice/bin/sluice";
  request.output_dir = "/scratch/logs";
  request.job_name = "sluice-mlp";
  request.nodes = 2;
  request.time = "02:30:00";
  return request;
}

bool contains_line(const std::string& script, const std::string& line) {
  std::istringstream lines(script);
  for (std::string each; std::getline(lines, each);) {
    if (each == line) return true;
  }
  return false;
}

// The error message of render_sbatch_script, or "" when it did not throw kInvalidArgument.
std::string render_error(const SbatchRequest& request, const config::Config& config) {
  try {
    render_sbatch_script(request, config);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kInvalidArgument) return e.what();
    return std::string("wrong error code: ") + e.what();
  }
  return "";
}

TEST(JobTaskCount, StagesTimesDataParallel) {
  EXPECT_EQ(job_task_count(pipeline_config(4, 0)), 4);  // 0: derive, one replica
  EXPECT_EQ(job_task_count(pipeline_config(4, 1)), 4);
  EXPECT_EQ(job_task_count(pipeline_config(4, 3)), 12);
}

// pipeline.domain: every stage of every replica runs on one rank per block.
TEST(JobTaskCount, TimesTheDomainsBlocks) {
  config::Config config = pipeline_config(2, 3);
  config.pipeline.domain = {2, 2};
  EXPECT_EQ(job_task_count(config), 24);
  config.pipeline.domain = {1, 1, 1};
  EXPECT_EQ(job_task_count(config), 6);
  config.pipeline.domain = {2, 2};
  SbatchRequest request = basic_request();
  request.nodes = 2;
  request.tasks_per_node = 4;
  EXPECT_NE(render_error(request, config).find("pipeline.stages (2) x pipeline.data_parallel (3) x pipeline.domain's "
                                               "4 blocks = 24 tasks do not fit --nodes 2 x --tasks-per-node 4"),
            std::string::npos)
      << render_error(request, config);
}

// `--set pipeline.stages=2147483647` once printed "= -2 tasks": the product is named in 64 bits and refused.
TEST(JobTaskCount, ProductBeyondAnIntIsRefusedWithItsNumbers) {
  EXPECT_EQ(job_task_count(pipeline_config(2147483647, 2)), 4294967294LL);
  const std::string message = render_error(basic_request(), pipeline_config(2147483647, 2));
  EXPECT_NE(message.find("pipeline.stages (2147483647) x pipeline.data_parallel (2) = 4294967294 tasks, more than an "
                         "MPI job can have (2147483647)"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("-2"), std::string::npos) << message;
}

TEST(TasksPerNode, DefaultSpreadsEvenlyRoundingUp) {
  SbatchRequest request = basic_request();
  request.nodes = 3;
  EXPECT_EQ(tasks_per_node_for(request, 8), 3);
  request.tasks_per_node = 5;
  EXPECT_EQ(tasks_per_node_for(request, 8), 5);
}

TEST(RenderSbatchScript, DirectivesComeFromConfigAndRequest) {
  const std::string script = render_sbatch_script(basic_request(), pipeline_config(4, 2));
  EXPECT_TRUE(contains_line(script, "#SBATCH --job-name=sluice-mlp"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --nodes=2"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --ntasks=8"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --ntasks-per-node=4"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --cpus-per-task=1"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --time=02:30:00"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --signal=B:USR1@120"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --requeue"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --output=/scratch/logs/sluice-mlp-%j.out"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --error=/scratch/logs/sluice-mlp-%j.err"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --open-mode=append"));
  EXPECT_TRUE(contains_line(script, "sluice=/opt/sluice/bin/sluice"));
  EXPECT_TRUE(contains_line(script, "config=/jobs/mlp.yaml"));
  EXPECT_EQ(script.find("--gpus-per-task"), std::string::npos);
  EXPECT_EQ(script.find("#SBATCH --partition"), std::string::npos);
  EXPECT_FALSE(std::regex_search(script, std::regex("@[A-Z0-9_]+@"))) << "unfilled placeholder";
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u) << "sbatch needs the interpreter line first";
}

TEST(RenderSbatchScript, EveryDirectiveIsExplainedByAComment) {
  SbatchRequest request = basic_request();
  request.partition = "gpu_long";
  request.account = "proj42";
  for (bool gpus : {false, true}) {
    request.gpus = gpus;
    const std::string script = render_sbatch_script(request, pipeline_config(4, 1, {gpus ? "cuda" : "cpu"}));
    std::istringstream lines(script);
    std::string previous;
    int directives = 0;
    for (std::string line; std::getline(lines, line); previous = line) {
      if (line.rfind("#SBATCH", 0) != 0) continue;
      ++directives;
      EXPECT_TRUE(previous.rfind("# ", 0) == 0 || previous.rfind("#SBATCH", 0) == 0)
          << "directive without a comment above it: " << line;
    }
    EXPECT_EQ(directives, gpus ? 14 : 13) << "job-name nodes ntasks ntasks-per-node cpus-per-task [gpus-per-task] "
                                             "time signal requeue output error open-mode partition account";
  }
}

TEST(RenderSbatchScript, GpuTemplateAsksOneGpuPerRank) {
  SbatchRequest request = basic_request();
  request.gpus = true;
  const std::string script = render_sbatch_script(request, pipeline_config(4, 1, {"cuda"}));
  EXPECT_TRUE(contains_line(script, "#SBATCH --gpus-per-task=1"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --ntasks=4"));
  // One cuda stage is enough for the GPU template (the whole job gets it: one template per job).
  const std::string mixed = render_sbatch_script(request, pipeline_config(4, 2, {"cpu", "cpu", "cpu", "cuda"}));
  EXPECT_TRUE(contains_line(mixed, "#SBATCH --gpus-per-task=1"));
  EXPECT_TRUE(contains_line(mixed, "#SBATCH --ntasks=8"));
}

TEST(RenderSbatchScript, PartitionAndAccountBecomeDirectives) {
  SbatchRequest request = basic_request();
  request.partition = "debug";
  request.account = "climate-7";
  const std::string script = render_sbatch_script(request, pipeline_config(2, 1));
  EXPECT_TRUE(contains_line(script, "#SBATCH --partition=debug"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --account=climate-7"));
}

TEST(RenderSbatchScript, SbatchOptionsBecomeDirectivesUnderOneComment) {
  SbatchRequest request = basic_request();
  request.sbatch_options = {"qos=long", "--mem=0", "exclusive", "constraint=intel&ib"};
  const std::string script = render_sbatch_script(request, pipeline_config(2, 1));
  EXPECT_TRUE(contains_line(script, "# From `sluice submit --sbatch-option`."));
  for (const char* line : {"#SBATCH --qos=long", "#SBATCH --mem=0", "#SBATCH --exclusive",
                           "#SBATCH --constraint=intel&ib"}) {
    EXPECT_TRUE(contains_line(script, line)) << line;
  }
  // They come before the first command: sbatch stops reading #SBATCH lines there.
  EXPECT_LT(script.find("#SBATCH --constraint=intel&ib"), script.find("\nset -u\n"));
}

TEST(RenderSbatchScript, SbatchOptionsThatContradictTheScriptAreRefusedNamingTheirOption) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"time=2-00:00:00", "--time is set by --time; use that option instead"},
      {"--signal=B:USR1@300", "--signal is set by --warning-seconds"},
      {"no-requeue", "--no-requeue is set by the template"},
      {"ntasks=64", "--ntasks is set by the config"},
      {"sig=USR2@60", "--signal is set by --warning-seconds"},  // sbatch takes unambiguous prefixes
      {"gpus=2", "--gpus is set by --gpus"},
      {"array=0-3", "--array is set by one job per checkpoint.dir"},
      {"-q long", "is not NAME or NAME=VALUE"},
      {"qos=a b", "is not NAME or NAME=VALUE"},
      {"mem=1G;rm", "is not NAME or NAME=VALUE"},
      {"", "is not NAME or NAME=VALUE"},
  };
  for (const auto& [option, expected] : cases) {
    SbatchRequest request = basic_request();
    request.sbatch_options = {"qos=long", option};
    const std::string message = render_error(request, pipeline_config(2, 1));
    EXPECT_NE(message.find("--sbatch-option \"" + option + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << option << ": " << message;
  }
}

TEST(RenderSbatchScript, WarningSecondsSetTheSignalLead) {
  SbatchRequest request = basic_request();
  EXPECT_TRUE(contains_line(render_sbatch_script(request, pipeline_config(2, 1)), "#SBATCH --signal=B:USR1@120"));
  request.warning_seconds = 600;
  for (bool gpus : {false, true}) {
    request.gpus = gpus;
    const std::string script = render_sbatch_script(request, pipeline_config(2, 1, {gpus ? "cuda" : "cpu"}));
    EXPECT_TRUE(contains_line(script, "#SBATCH --signal=B:USR1@600")) << (gpus ? "gpu" : "cpu");
    EXPECT_NE(script.find("# 600 s before the time limit"), std::string::npos);
  }
  request.gpus = false;
  request.warning_seconds = 5;
  EXPECT_EQ(render_error(request, pipeline_config(2, 1)), "--warning-seconds must be between 10 and 86400, got 5");
  // A warning before the job could train would requeue it forever.
  request.time = "00:10:00";
  request.warning_seconds = 600;
  EXPECT_EQ(render_error(request, pipeline_config(2, 1)),
            "--warning-seconds 600 is not shorter than --time 00:10:00: the warning would come before the job could "
            "train");
  request.warning_seconds = 599;
  EXPECT_TRUE(contains_line(render_sbatch_script(request, pipeline_config(2, 1)), "#SBATCH --signal=B:USR1@599"));
  request.time = "1-00:00:00";
  request.warning_seconds = 86400;
  EXPECT_NE(render_error(request, pipeline_config(2, 1)).find("is not shorter than --time 1-00:00:00"),
            std::string::npos);
}

TEST(RenderSbatchScript, OverridesAndOddPathsAreQuotedForBash) {
  SbatchRequest request = basic_request();
  request.config_path = "/jobs/my run's config.yaml";
  request.overrides = {"optimizer.lr=0.01", "checkpoint.dir=/scratch/ck pts"};
  const std::string script = render_sbatch_script(request, pipeline_config(2, 1));
  EXPECT_TRUE(contains_line(script, "config='/jobs/my run'\\''s config.yaml'"));
  EXPECT_NE(script.find("--auto-resume --set optimizer.lr=0.01 --set 'checkpoint.dir=/scratch/ck pts'\n"),
            std::string::npos);
}

TEST(RenderSbatchScript, TasksThatDoNotFitNameTheNumbers) {
  SbatchRequest request = basic_request();
  request.nodes = 1;
  request.tasks_per_node = 4;
  EXPECT_EQ(render_error(request, pipeline_config(4, 2)),
            "pipeline.stages (4) x pipeline.data_parallel (2) = 8 tasks do not fit --nodes 1 x --tasks-per-node 4 "
            "= 4 slots");
}

TEST(RenderSbatchScript, MoreNodesThanTasksIsAnError) {
  SbatchRequest request = basic_request();
  request.nodes = 5;
  EXPECT_NE(render_error(request, pipeline_config(4, 1)).find("--nodes 5 is more than the"), std::string::npos);
}

TEST(RenderSbatchScript, BadCountsAreErrors) {
  SbatchRequest request = basic_request();
  request.nodes = 0;
  EXPECT_EQ(render_error(request, pipeline_config(4, 1)), "--nodes must be at least 1, got 0");
  request = basic_request();
  request.cpus_per_task = 0;
  EXPECT_EQ(render_error(request, pipeline_config(4, 1)), "--cpus-per-task must be at least 1, got 0");
  request = basic_request();
  request.tasks_per_node = -3;
  EXPECT_EQ(render_error(request, pipeline_config(4, 1)), "--tasks-per-node must be at least 1, got -3");
}

TEST(RenderSbatchScript, TimeMustBeSlurmDuration) {
  SbatchRequest request = basic_request();
  for (const char* good : {"00:10:00", "48:00:00", "2-12:00:00"}) {
    request.time = good;
    EXPECT_EQ(render_error(request, pipeline_config(4, 1)), "") << good;
  }
  for (const char* bad : {"10", "1:2:3", "01:60:00", "ten minutes", ""}) {
    request.time = bad;
    EXPECT_EQ(render_error(request, pipeline_config(4, 1)),
              std::string("--time \"") + bad + "\" is not HH:MM:SS or D-HH:MM:SS");
  }
}

TEST(RenderSbatchScript, GpuFlagMustMatchTheConfigDevice) {
  SbatchRequest request = basic_request();
  request.gpus = true;
  EXPECT_NE(render_error(request, pipeline_config(4, 1, {"cpu"})).find("--gpus was given but the config's device is"),
            std::string::npos);
  EXPECT_NE(render_error(request, pipeline_config(4, 1, {"cpu", "cpu", "cpu", "cpu"}))
                .find("--gpus was given but the config's device is \"cpu\" on every stage"),
            std::string::npos);
  request.gpus = false;
  EXPECT_EQ(render_error(request, pipeline_config(4, 1, {"cuda"})),
            "the config's device is cuda: add --gpus to ask Slurm for GPUs");
  EXPECT_EQ(render_error(request, pipeline_config(4, 1, {"cpu", "cuda", "cpu", "cpu"})),
            "the config's device is cuda on some stages: add --gpus to ask Slurm for GPUs");
  EXPECT_EQ(render_error(request, pipeline_config(4, 1, {"cpu", "cpu", "cpu", "cpu"})), "");
}

TEST(RenderSbatchScript, UnquotableDirectiveValuesAreErrors) {
  SbatchRequest request = basic_request();
  request.output_dir = "/scratch/my logs";
  EXPECT_NE(render_error(request, pipeline_config(4, 1)).find("--output-dir \"/scratch/my logs\" cannot go on"),
            std::string::npos);
  request = basic_request();
  request.job_name = "a;b";
  EXPECT_NE(render_error(request, pipeline_config(4, 1)).find("job name \"a;b\""), std::string::npos);
  request = basic_request();
  request.partition = "x y";
  EXPECT_NE(render_error(request, pipeline_config(4, 1)).find("--partition \"x y\""), std::string::npos);
}

// Values of 30,000+ characters (issue 28: std::regex's recursive matcher overflowed the stack on them, SIGSEGV):
// each option keeps its accepted and refused characters at any length, and the message cuts the value.
TEST(RenderSbatchScript, LongOptionValuesAreCheckedWithoutOverflowingTheStack) {
  const std::string word(40000, 'a');
  const config::Config config = pipeline_config(4, 1);
  std::vector<std::pair<std::string, std::function<void(SbatchRequest&, const std::string&)>>> options = {
      {"job name", [](SbatchRequest& r, const std::string& v) { r.job_name = v; }},
      {"--partition", [](SbatchRequest& r, const std::string& v) { r.partition = v; }},
      {"--account", [](SbatchRequest& r, const std::string& v) { r.account = v; }},
      {"--output-dir", [](SbatchRequest& r, const std::string& v) { r.output_dir = "/" + v; }},
  };
  for (const auto& [name, set] : options) {
    SbatchRequest request = basic_request();
    set(request, word);
    EXPECT_EQ(render_error(request, config), "") << name;
    set(request, word + " x");
    const std::string message = render_error(request, config);
    EXPECT_EQ(message.rfind(name + " \"", 0), 0u) << message.substr(0, 300);
    EXPECT_NE(message.find("characters cut"), std::string::npos) << name << ": the value is cut in the message";
    EXPECT_LT(message.size(), 1000u) << name;
  }
  SbatchRequest request = basic_request();
  request.sbatch_options = {"qos=" + word, word, "constraint=" + std::string(40000, '&')};
  EXPECT_EQ(render_error(request, config), "");
  for (const std::string& bad : {"qos=" + word + " x", word + "=", "qos=" + word + "'", word + "A"}) {
    request.sbatch_options = {bad};
    EXPECT_NE(render_error(request, config).find("is not NAME or NAME=VALUE"), std::string::npos);
  }
  request = basic_request();
  request.time = std::string(40000, '1') + ":00:00";  // a valid shape; its huge hour count saturates
  EXPECT_EQ(render_error(request, config), "");
  request.time = std::string(40000, '1') + "-" + std::string(40000, '2') + ":59:59";
  EXPECT_EQ(render_error(request, config), "");
  for (const std::string& bad : {std::string(40000, '1'), std::string(40000, '1') + ":60:00", word + ":00:00"}) {
    request.time = bad;
    EXPECT_NE(render_error(request, config).find("is not HH:MM:SS or D-HH:MM:SS"), std::string::npos);
  }
}

TEST(RenderSbatchScript, RelativePathsAreErrors) {
  SbatchRequest request = basic_request();
  request.sluice_path = "bazel-bin/tools/sluice/sluice";
  EXPECT_EQ(render_error(request, pipeline_config(4, 1)),
            "path \"bazel-bin/tools/sluice/sluice\" must be absolute in a batch script");
}

TEST(RenderSbatchScript, ConfigWithoutCheckpointDirIsRefused) {
  config::Config config = pipeline_config(4, 1);
  config.checkpoint.dir.clear();
  const std::string message = render_error(basic_request(), config);
  // One line that names the key and the fix.
  EXPECT_EQ(message.rfind("checkpoint.dir is not set", 0), 0u) << message;
  EXPECT_NE(message.find("--set checkpoint.dir=DIR"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(MpirunCommand, SameRanksAndArguments) {
  SbatchRequest request = basic_request();
  request.overrides = {"steps=5"};
  EXPECT_EQ(mpirun_command(request, pipeline_config(4, 2)),
            "mpirun --mca odls_base_sigkill_timeout 30 -np 8 /opt/sluice/bin/sluice train /jobs/mlp.yaml "
            "--auto-resume --set steps=5");
}

// `sluice submit --program`: the program and its quoted arguments replace `sluice train` in the srun line.
SbatchRequest program_request() {
  SbatchRequest request = basic_request();
  request.program_path = "/home/me/sim dir/my_sim";
  request.program_args = {"--steps", "100", "two words", "it's", "$HOME", "a\"b", ""};
  return request;
}

// The script's lines from `marker` on (the part after the #SBATCH header that runs the job).
std::string from_line(const std::string& script, const std::string& marker) {
  const std::size_t at = script.find(marker);
  return at == std::string::npos ? "" : script.substr(at);
}

TEST(RenderSbatchScript, ProgramReplacesSluiceTrainWithQuotedArguments) {
  const std::string script = render_sbatch_script(program_request(), pipeline_config(2, 1));
  EXPECT_TRUE(contains_line(script, "program='/home/me/sim dir/my_sim'"));
  EXPECT_TRUE(contains_line(script, "export SLUICE_CONFIG=/jobs/mlp.yaml"));
  EXPECT_TRUE(contains_line(
      script, "  srun --mpi=pmix \"$program\" --steps 100 'two words' 'it'\\''s' '$HOME' 'a\"b' ''"));
  EXPECT_EQ(script.find("\"$sluice\" train"), std::string::npos);
  EXPECT_EQ(script.find("/opt/sluice/bin/sluice"), std::string::npos);
  EXPECT_TRUE(contains_line(script, "#SBATCH --ntasks=2"));
}

// Same template, so the same signals, requeue-on-75 and SIGTERM handling as `sluice train`: the scripts differ
// only in the step's variables and command line.
TEST(RenderSbatchScript, ProgramJobHasTheSameSignalAndRequeueLogicAsTrain) {
  const std::string train = render_sbatch_script(basic_request(), pipeline_config(2, 1));
  const std::string program = render_sbatch_script(program_request(), pipeline_config(2, 1));
  const std::string marker = "# One kernel thread per allocated core";
  const std::string train_tail = from_line(train, marker);
  std::string program_tail = from_line(program, marker);
  ASSERT_FALSE(train_tail.empty());
  const std::string train_step = "srun --mpi=pmix \"$sluice\" train \"$config\" --auto-resume\n";
  const std::size_t train_at = train_tail.find(train_step);
  ASSERT_NE(train_at, std::string::npos);
  const std::size_t program_at = program_tail.find("srun --mpi=pmix \"$program\"");
  ASSERT_NE(program_at, std::string::npos);
  program_tail.replace(program_at, program_tail.find('\n', program_at) + 1 - program_at, train_step);
  EXPECT_EQ(train_tail, program_tail);
  for (const std::string& line : {"#SBATCH --signal=B:USR1@120", "#SBATCH --requeue", "trap forward_warning USR1",
                                  "trap note_termination TERM", "  trap '' TERM",
                                  "  if ! scontrol requeue \"$SLURM_JOB_ID\"; then"}) {
    EXPECT_TRUE(contains_line(program, line)) << line;
  }
}

TEST(RenderSbatchScript, ProgramRefusesTrainOverridesAndRelativePaths) {
  SbatchRequest request = program_request();
  request.overrides = {"steps=5"};
  EXPECT_NE(render_error(request, pipeline_config(2, 1)).find("--set overrides are arguments of `sluice train`"),
            std::string::npos);
  request = program_request();
  request.program_path = "bin/my_sim";
  EXPECT_EQ(render_error(request, pipeline_config(2, 1)), "path \"bin/my_sim\" must be absolute in a batch script");
}

TEST(MpirunCommand, ProgramWithItsArguments) {
  SbatchRequest request = program_request();
  request.program_args = {"100", "two words"};
  EXPECT_EQ(mpirun_command(request, pipeline_config(2, 1)),
            "SLUICE_CONFIG=/jobs/mlp.yaml mpirun --mca odls_base_sigkill_timeout 30 -np 2 '/home/me/sim dir/my_sim' "
            "100 'two words'");
}

// --- `--nodes MIN-MAX`: a job a requeue can shrink after a node is lost (issue 31) -------------------------

// The error message of set_node_count, or "" when it did not throw kInvalidArgument.
std::string node_count_error(const std::string& text) {
  SbatchRequest request;
  try {
    set_node_count(text, request);
  } catch (const Error& e) {
    return e.code() == ErrorCode::kInvalidArgument ? e.what() : std::string("wrong error code: ") + e.what();
  }
  return "";
}

TEST(SetNodeCount, ACountOrARange) {
  SbatchRequest request;
  set_node_count("3", request);
  EXPECT_EQ(request.nodes, 3);
  EXPECT_EQ(request.min_nodes, 0);
  set_node_count("1-4", request);
  EXPECT_EQ(request.nodes, 4);
  EXPECT_EQ(request.min_nodes, 1);
  set_node_count("2-2", request);  // a range of one count is that count
  EXPECT_EQ(request.nodes, 2);
  EXPECT_EQ(request.min_nodes, 0);
}

TEST(SetNodeCount, MalformedRangesAreRefusedNamingTheOption) {
  for (const std::string text : {"", "x", "-2", "1-", "+2", " 2", "2 ", "1-2-3", "1..2", "1-x", "0x2"}) {
    EXPECT_EQ(node_count_error(text),
              "--nodes \"" + text + "\" is not a node count N or a range MIN-MAX (e.g. 2 or 1-2)");
  }
  EXPECT_EQ(node_count_error("3-2"), "--nodes 3-2: MIN (3) is more than MAX (2)");
  EXPECT_EQ(node_count_error("0-2"), "--nodes 0-2: a job needs at least 1 node");
}

SbatchRequest range_request() {
  SbatchRequest request = basic_request();
  set_node_count("1-2", request);
  request.tasks_per_node = 2;
  return request;
}

TEST(RenderSbatchScript, NodeRangeAsksForWholeNodesWithoutATaskCount) {
  const std::string script = render_sbatch_script(range_request(), pipeline_config(2, 0));
  EXPECT_TRUE(contains_line(script, "#SBATCH --nodes=1-2"));
  EXPECT_TRUE(contains_line(script, "#SBATCH --exclusive"));
  EXPECT_EQ(script.find("#SBATCH --ntasks"), std::string::npos) << "a task count would survive the requeue";
  EXPECT_NE(script.find("  srun --mpi=pmix --ntasks-per-node=2 \"$sluice\" train \"$config\" --auto-resume\n"),
            std::string::npos);
  EXPECT_FALSE(std::regex_search(script, std::regex("@[A-Z0-9_]+@"))) << "unfilled placeholder";
  // A fixed count keeps its task count and a plain srun.
  const std::string fixed = render_sbatch_script(basic_request(), pipeline_config(4, 1));
  EXPECT_TRUE(contains_line(fixed, "#SBATCH --ntasks=4"));
  EXPECT_NE(fixed.find("  srun --mpi=pmix \"$sluice\" train"), std::string::npos);
  EXPECT_EQ(fixed.find("--exclusive"), std::string::npos);
}

// MPICH's ranks take their rank from PMI-2: the job step asks srun for that plugin, in both templates.
TEST(RenderSbatchScript, SrunMpiPluginIsTheRequestedOne) {
  for (bool gpus : {false, true}) {
    SbatchRequest request = range_request();
    request.gpus = gpus;
    request.srun_mpi = SrunMpi::kPmi2;
    const std::string script = render_sbatch_script(request, pipeline_config(2, 0, {gpus ? "cuda" : "cpu"}));
    EXPECT_NE(script.find("  srun --mpi=pmi2 --ntasks-per-node=2 \"$sluice\" train"), std::string::npos) << script;
    EXPECT_EQ(script.find("pmix"), std::string::npos) << "gpus " << gpus;
  }
}

TEST(RenderSbatchScript, NodeRangeDirectivesAreExplainedAndGpusGoPerNode) {
  SbatchRequest request = range_request();
  for (bool gpus : {false, true}) {
    request.gpus = gpus;
    const std::string script = render_sbatch_script(request, pipeline_config(2, 0, {gpus ? "cuda" : "cpu"}));
    std::istringstream lines(script);
    std::string previous;
    int directives = 0;
    for (std::string line; std::getline(lines, line); previous = line) {
      if (line.rfind("#SBATCH", 0) != 0) continue;
      ++directives;
      EXPECT_TRUE(previous.rfind("# ", 0) == 0 || previous.rfind("#SBATCH", 0) == 0)
          << "directive without a comment above it: " << line;
    }
    EXPECT_EQ(directives, gpus ? 11 : 10) << "job-name nodes exclusive cpus-per-task [gpus-per-node] time signal "
                                             "requeue output error open-mode";
    EXPECT_EQ(contains_line(script, "#SBATCH --gpus-per-node=2"), gpus);
    EXPECT_EQ(script.find("gpus-per-task"), std::string::npos) << "there is no task count to attach GPUs to";
  }
}

TEST(RenderSbatchScript, NodeRangeErrorsNameTheOptionAndTheConfigKey) {
  SbatchRequest request = range_request();
  request.tasks_per_node = 0;
  EXPECT_EQ(render_error(request, pipeline_config(2, 0)),
            "--nodes 1-2 (a range) needs --tasks-per-node: the ranks on each node stay fixed and their total follows "
            "the nodes the job gets");
  EXPECT_EQ(render_error(range_request(), pipeline_config(2, 2)),
            "--nodes 1-2 (a range) needs pipeline.data_parallel unset (derived from the ranks), but it is 2: a job "
            "on fewer nodes could not start");
  EXPECT_EQ(render_error(range_request(), pipeline_config(4, 0)),
            "--nodes 1-2 (a range) needs --tasks-per-node to be a multiple of pipeline.stages (4), got 2: on 1 "
            "node(s) the job would have 2 ranks or on one more node a count that is not whole pipelines");
  EXPECT_EQ(render_error(range_request(), pipeline_config(1, 0)), "");  // 1 or 2 replicas of a 1-stage pipeline
}

TEST(MpirunCommand, NodeRangeStartsTheRanksOfTheMostNodes) {
  EXPECT_EQ(mpirun_command(range_request(), pipeline_config(2, 0)),
            "mpirun --mca odls_base_sigkill_timeout 30 -np 4 /opt/sluice/bin/sluice train /jobs/mlp.yaml "
            "--auto-resume");
}

}  // namespace
}  // namespace sluice::slurm
