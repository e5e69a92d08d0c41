#include "tools/sluice/plan_command.h"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include "core/common/error.h"
#include "core/common/message_text.h"
#include "core/schedule/chrome_trace.h"
#include "core/schedule/cost_profile.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/render.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/simulator.h"
#include "core/schedule/validator.h"
#include "core/config/config_parser.h"
#include "core/model/model_shape.h"
#include "core/model/stage_widths.h"
#include "tools/sluice/plan_declared_layers.h"
#include "tools/sluice/plan_domain.h"
#include "core/runtime/schedule_choice.h"
#include "tools/sluice/plan_layer_table.h"
#include "tools/sluice/plan_memory.h"
#include "tools/sluice/plan_stage_table.h"

namespace sluice::tools {
namespace {

using namespace sluice::schedule;

struct PlanOptions {
  std::string config_path;  // optional: schedule, sizes and model from a training config; flags override
  std::vector<std::string> overrides;  // --set key.path=value, applied to the config as `sluice train` does
  std::string schedule;
  std::string from_file;
  int stages = 0;
  int microbatches = 0;
  int chunks = 0;  // 0: the schedule's natural choice (2 for interleaved and zb-v, else 1)
  CostModel costs;
  std::string costs_path;  // a measured profile (sluice train --profile) instead of --cost-* and --latency
  std::string format = "text";
  std::string output;
  std::string save_schedule_path;
};

// What a config adds to the plan: the recompute mode and the measured stash of one micro-batch per stage.
struct ModelPlan {
  std::string recompute;
  StageMemory memory;
  std::vector<double> peak_stash_bytes;  // per rank
  std::vector<ScheduleStages> stage_tables;  // the planned schedule's ranks, then every other kind's
};

// The lowered lists replayed under each transport's rule (core/schedule/replay.h). The makespan above them is the
// compute-only one; these say what the placement of SEND/RECV costs on NCCL (posting order) and with rendezvous
// (blocking) messages, so a difference is reported rather than hidden.
struct TransferMakespans {
  double posting_order = 0.0;
  double blocking = 0.0;
};

// From the replays the costed lowering ran to choose its placement (none for one rank: nothing to place).
TransferMakespans transfers_of(const CostedLowering& lowering) {
  if (!is_lowered(lowering.lowered)) return {};
  return {lowering.posting_order, lowering.blocking};
}

// Simulated time units become milliseconds in the trace viewer, which reads microseconds.
constexpr double kTraceMicrosecondsPerUnit = 1000.0;

template <typename T>
std::string json_array(const std::vector<T>& values) {
  std::ostringstream out;
  out << std::setprecision(17) << '[';
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  out << ']';
  return out.str();
}

// `domain`: plan_domain's JSON object, or "" without a split.
void write_json(std::ostream& out, const Schedule& lowered, const SimulationResult& result,
                const TransferMakespans& transfers, const std::optional<ModelPlan>& model, const std::string& domain) {
  out << std::setprecision(17) << "{\"schedule\":" << json_quote(lowered.name) << ",\"stages\":" << lowered.ranks
      << ",\"microbatches\":" << lowered.microbatches << ",\"chunks\":" << lowered.chunks
      << ",\"virtual_stages\":" << lowered.num_stages() << ",\"makespan\":" << result.makespan
      << ",\"bubble_fraction\":" << result.bubble_fraction << ",\"busy\":" << json_array(result.busy)
      << ",\"idle\":" << json_array(result.idle) << ",\"peak_inflight\":" << json_array(result.peak_inflight);
  if (is_lowered(lowered))
    out << ",\"makespan_posting_order\":" << transfers.posting_order
        << ",\"makespan_blocking\":" << transfers.blocking;
  if (model)
    out << ",\"recompute\":" << json_quote(model->recompute) << ",\"microbatch_rows\":" << model->memory.rows
        << ",\"stash_estimated\":" << (model->memory.estimated ? "true" : "false")
        << ",\"stash_bytes_per_stage\":" << json_array(model->memory.stash_bytes)
        << ",\"peak_stash_bytes\":" << json_array(model->peak_stash_bytes)
        << ",\"stage_tables\":" << stage_tables_json(model->stage_tables);
  if (!domain.empty()) out << ",\"domain\":" << domain;
  out << ",\"actions\":[";
  for (int rank = 0; rank < lowered.ranks; ++rank) {
    out << (rank ? "," : "") << '[';
    for (size_t i = 0; i < lowered.actions[rank].size(); ++i)
      out << (i ? "," : "") << json_quote(to_string(lowered.actions[rank][i]));
    out << ']';
  }
  out << "]}\n";
}

// The costed lowering keeps both replays within 1% of compute only where it finds a placement that does; where it
// does not (blocking pairs with a message latency always cost the sender the transfer), say by how much.
void write_transfer_shortfall(std::ostream& out, double compute_only, const TransferMakespans& transfers) {
  const std::pair<const char*, double> replays[] = {{"posting order (NCCL)", transfers.posting_order},
                                                    {"blocking send/recv pairs", transfers.blocking}};
  for (const auto& [mode, makespan] : replays) {
    if (compute_only <= 0.0 || makespan <= compute_only * 1.01) continue;
    out << "no SEND/RECV placement found within 1% of compute only for " << mode << ": " << makespan << " vs "
        << compute_only << " (+" << std::fixed << std::setprecision(1) << 100.0 * (makespan / compute_only - 1.0)
        << "%)\n" << std::defaultfloat << std::setprecision(6);
  }
}

void write_text(std::ostream& out, const Schedule& lowered, const SimulationResult& result, const CostModel& costs,
                const TransferMakespans& transfers, const std::optional<ModelPlan>& model) {
  out << "schedule " << lowered.name << ": " << lowered.ranks << " ranks x " << lowered.chunks << " chunk(s), "
      << lowered.microbatches << " micro-batches (F=" << costs.forward << " I=" << costs.backward_input
      << " W=" << costs.backward_weight << " latency=" << costs.latency << ")\n\n"
      << render_ascii(result) << "\n"
      << "makespan " << result.makespan << ", bubble fraction " << std::fixed << std::setprecision(4)
      << result.bubble_fraction << " (" << std::setprecision(2) << 100.0 * result.bubble_fraction << "%)\n"
      << std::defaultfloat << std::setprecision(6);
  if (is_lowered(lowered))
    out << "with the lowered SEND/RECV: makespan " << transfers.posting_order << " when transfers complete in posting "
        << "order (NCCL), " << transfers.blocking << " with blocking send/recv pairs\n";
  if (is_lowered(lowered)) write_transfer_shortfall(out, result.makespan, transfers);
  if (model)
    out << "recompute " << model->recompute << ", " << model->memory.rows
        << " rows per micro-batch; peak stash = bytes the rank's stages keep for backward ("
        << (model->memory.estimated ? "estimated from the layer shapes: the model is too large to build here"
                                    : "measured per stage on the CPU backend")
        << (model->memory.halo_inputs ? ", plus the dropped halo layers' filled inputs recompute_halos: stash keeps"
                                      : "")
        << "; with split backward counted until W, an upper bound)\n";
  out << "rank  busy      idle      peak in-flight" << (model ? "  peak stash bytes" : "") << "\n";
  for (int rank = 0; rank < lowered.ranks; ++rank) {
    out << std::left << std::setw(6) << rank << std::setw(10) << result.busy[rank] << std::setw(10)
        << result.idle[rank];
    if (model) {
      out << std::setw(16) << result.peak_inflight[rank] << std::fixed << std::setprecision(0) << model->peak_stash_bytes[rank]
          << std::defaultfloat << std::setprecision(6);
    } else {
      out << result.peak_inflight[rank];
    }
    out << "\n";
  }
}

// CLI::ExistingFile, whose message repeats the whole name (a mistyped one can be megabytes long).
const CLI::Validator kExistingFileShortMessage(
    [](std::string& path) {
      std::error_code not_checked;
      if (std::filesystem::is_regular_file(path, not_checked)) return std::string();
      return "file does not exist: " + shorten_for_message(path);
    },
    "FILE");

// The largest schedule `plan` draws: the --stages and --microbatches flags' ranges, also applied to the values a
// config gives (`--set pipeline.stages=2147483647` once ended in std::bad_alloc).
constexpr int kMaxPlanStages = 1 << 20;
constexpr int kMaxPlanMicrobatches = 1 << 24;

int within_plan_limit(int value, int limit, const char* key) {
  if (value > limit) {
    throw Error(ErrorCode::kInvalidArgument, std::string("plan: ") + key + " is " + std::to_string(value) +
                                                 ", more than plan can simulate (at most " + std::to_string(limit) +
                                                 "); give a smaller value, or --stages/--microbatches");
  }
  return value;
}

// Fills what the flags left unset from the config's pipeline section (flags override the config).
void take_unset_from_config(PlanOptions& options, const config::Config& cfg) {
  const std::string configured = config::schedule_setting_name(cfg.pipeline.schedule);
  if (options.schedule.empty() && options.from_file.empty()) options.schedule = configured;
  if (options.stages == 0) options.stages = within_plan_limit(cfg.pipeline.stages, kMaxPlanStages, "pipeline.stages");
  if (options.microbatches == 0) {
    options.microbatches = within_plan_limit(cfg.pipeline.microbatches, kMaxPlanMicrobatches, "pipeline.microbatches");
  }
  // The config's chunk count belongs to its schedule; another schedule from --schedule gets its own default.
  if (options.chunks == 0 && options.schedule == configured) options.chunks = cfg.pipeline.chunks;
}

// Measures the config's model on the plan's layout. Recomputation runs (part of) a stage's forward again before
// its backward-for-input, so the I cost grows by that share of F.
ModelPlan plan_model(const config::Config& cfg, const Schedule& compute, CostModel& costs) {
  ModelPlan plan;
  plan.recompute = model::recompute_mode_name(cfg.pipeline.recompute);
  plan.memory = measure_stage_memory(cfg, compute.ranks, compute.chunks, compute.microbatches);
  costs.backward_input += plan.memory.recompute_share * costs.forward;
  plan.peak_stash_bytes = peak_stash(compute, plan.memory.stash_bytes);
  plan.stage_tables = plan_stage_tables(cfg, compute, costs);
  return plan;
}

// pipeline.schedule auto in the config (and no --schedule): the trainer's choice, made the same way, replaces it in
// the config and the options; returns the candidate table that explains it.
std::string resolve_auto(config::Config& cfg, PlanOptions& options) {
  const model::CustomLayerRegistry custom = declared_layers(cfg.model);
  const runtime::ScheduleChoice choice =
      runtime::choose_schedule(cfg, model::model_shape(cfg.model, custom), runtime::rank_shapes(cfg, custom),
                               cfg.pipeline.data_parallel > 0 ? cfg.pipeline.data_parallel : 1);
  runtime::apply(choice.candidates[choice.chosen], cfg);
  // auto chooses all three, so they replace what the flags said
  options.schedule = config::schedule_setting_name(cfg.pipeline.schedule);
  options.chunks = cfg.pipeline.chunks;
  options.microbatches = cfg.pipeline.microbatches;
  return choice.report;
}

// The profile's per-sample costs for this layout: rows per micro-batch from the config's batch when there is one,
// else those of the run that measured them.
CostModel measured_costs(const std::string& path, const Schedule& compute, const std::optional<config::Config>& cfg) {
  const CostProfile profile = load_cost_profile(path);
  double rows = profile.microbatch_rows;
  if (cfg && cfg->data.batch > 0) {
    const int replicas = cfg->pipeline.data_parallel > 0 ? cfg->pipeline.data_parallel : 1;
    rows = static_cast<double>(cfg->data.batch) / replicas / compute.microbatches;
  }
  return costs_for(profile, compute.num_stages(), rows);
}

Schedule build_schedule(const PlanOptions& options) {
  if (!options.from_file.empty()) {
    const Schedule loaded = load_schedule(options.from_file);
    return is_lowered(loaded) ? compute_only(loaded) : loaded;
  }
  if (options.schedule.empty())
    throw Error(ErrorCode::kInvalidArgument, "plan: give --schedule (or --from-file)");
  if (options.stages <= 0 || options.microbatches <= 0)
    throw Error(ErrorCode::kInvalidArgument, "plan: --stages and --microbatches are required and must be positive");
  int chunks = options.chunks;
  const std::optional<schedule::ScheduleKind> kind = schedule::find_schedule_kind(options.schedule);
  if (chunks == 0 && kind) chunks = schedule::default_chunks(*kind);
  return make_schedule(options.schedule, options.stages, options.microbatches, chunks == 0 ? 1 : chunks);
}

// The schedule the trainer runs for `cfg`: with its skips that travel straight between stages (skip_routes.h).
Schedule with_skip_routes(Schedule compute, const std::optional<config::Config>& cfg) {
  if (!cfg || !compute.skips.empty()) return compute;  // a schedule file that lists its skips keeps them
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg->model, declared_layers(cfg->model));
  const std::vector<model::LayerRange> ranges = model::split_to_ranges(
      model::choose_model_split(cfg->model, shapes, cfg->pipeline, compute.num_stages()));
  for (const model::SkipRoute& route : model::skip_routes_of(cfg->model, shapes, ranges).routes)
    compute.skips.push_back({route.from, route.to});
  return compute;
}

void run_plan(PlanOptions options) {
  check_cost_model(options.costs);
  std::optional<config::Config> cfg;
  std::string auto_report;
  std::optional<DomainPlan> domain;
  if (options.config_path.empty() && !options.overrides.empty())
    throw Error(ErrorCode::kInvalidArgument, "plan: --set needs a CONFIG file to override");
  if (!options.config_path.empty()) {
    cfg = config::parse_config(options.config_path, options.overrides);
    if (!options.costs_path.empty()) cfg->pipeline.costs = options.costs_path;  // auto chooses with them too
    options.costs_path = cfg->pipeline.costs;
    take_unset_from_config(options, *cfg);
    domain = plan_domain(*cfg);  // checked first: a model that cannot run on the blocks is refused in every format
    if (options.schedule == config::auto_schedule_name()) auto_report = resolve_auto(*cfg, options);
  }
  const Schedule compute = build_schedule(options);
  if (!options.costs_path.empty()) options.costs = measured_costs(options.costs_path, compute, cfg);
  std::optional<ModelPlan> model;
  if (cfg) model = plan_model(*cfg, compute, options.costs);
  // Lowered with the costs the plan simulates, so that RECVs sit where their data arrives (no posting-order loss).
  const CostedLowering lowering = lower_and_replay(with_skip_routes(compute, cfg), options.costs);
  const Schedule& lowered = lowering.lowered;
  validate(lowered);
  const SimulationResult result = simulate(compute, options.costs);
  const TransferMakespans transfers = transfers_of(lowering);
  if (!options.save_schedule_path.empty()) save_schedule(lowered, options.save_schedule_path);

  std::ofstream file;
  if (!options.output.empty()) {
    file.open(options.output);
    if (!file) throw Error(ErrorCode::kIo, "plan: cannot open output file '" + options.output + "'");
  }
  std::ostream& out = options.output.empty() ? std::cout : file;
  if (options.format == "json") {
    write_json(out, lowered, result, transfers, model, domain ? domain_json(*domain) : "");
  } else if (options.format == "svg") {
    out << render_svg(result);
  } else if (options.format == "chrome") {
    write_chrome_trace(out, trace_events(result, kTraceMicrosecondsPerUnit));
  } else {
    if (cfg) write_layer_table(out, *cfg);
    if (domain) write_domain_text(out, *cfg, *domain);
    out << auto_report;
    write_text(out, lowered, result, options.costs, transfers, model);
    if (model) write_stage_tables(out, *cfg, model->stage_tables);
  }
  out.flush();
  if (!out) throw Error(ErrorCode::kIo, "plan: failed writing output");
}

}  // namespace

void register_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* plan = app.add_subcommand("plan", "Generate, validate and simulate a pipeline schedule");
  plan->add_option("config", options->config_path,
                   "Training config (YAML): schedule, stages, chunks and micro-batches from its pipeline section "
                   "(flags override), per-stage activation stash from its model and recompute policy")
      ->check(kExistingFileShortMessage);
  plan->add_option("--set", options->overrides, "With CONFIG: override a config key, key.path=value (repeatable)")
      ->allow_extra_args(false);  // one value per --set, so a config file after it stays positional
  plan->add_option("--schedule", options->schedule, "Schedule to generate")
      ->check(CLI::IsMember(schedule::schedule_names()));
  plan->add_option("--from-file", options->from_file, "Load a schedule (text, or CSV by .csv extension) instead")
      ->check(kExistingFileShortMessage);
  plan->add_option("--stages", options->stages, "Pipeline ranks P")->check(CLI::Range(1, kMaxPlanStages));
  plan->add_option("--microbatches", options->microbatches, "Micro-batches M")->check(CLI::Range(1, kMaxPlanMicrobatches));
  plan->add_option("--chunks", options->chunks, "Virtual stages per rank V (default 2 for interleaved/zb-v, else 1)")
      ->check(CLI::Range(1, 64));
  plan->add_option("--cost-f", options->costs.forward, "Forward cost per chunk")->check(CLI::NonNegativeNumber);
  plan->add_option("--cost-i", options->costs.backward_input, "Backward-for-input cost")->check(CLI::NonNegativeNumber);
  plan->add_option("--cost-w", options->costs.backward_weight, "Backward-for-weight cost")->check(CLI::NonNegativeNumber);
  plan->add_option("--latency", options->costs.latency, "Per-message latency")->check(CLI::NonNegativeNumber);
  plan->add_option("--costs", options->costs_path,
                   "Measured cost profile (sluice train --profile FILE) instead of --cost-* and --latency; with "
                   "CONFIG it also replaces pipeline.costs")
      ->check(CLI::ExistingFile);
  plan->add_option("--bytes", options->costs.bytes_per_message, "Bytes per message")->check(CLI::NonNegativeNumber);
  plan->add_option("--bandwidth", options->costs.bandwidth, "Bytes per time unit")->check(CLI::NonNegativeNumber);
  plan->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "svg", "chrome"}));
  plan->add_option("--output", options->output, "Write to FILE instead of stdout");
  plan->add_option("--save-schedule", options->save_schedule_path, "Also save the lowered schedule (.txt or .csv)");
  plan->callback([options]() { run_plan(*options); });
}

}  // namespace sluice::tools
