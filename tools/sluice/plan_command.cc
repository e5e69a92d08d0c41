#include "tools/sluice/plan_command.h"

#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "core/common/error.h"
#include "core/schedule/chrome_trace.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/render.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/simulator.h"
#include "core/schedule/validator.h"

namespace sluice::tools {
namespace {

using namespace sluice::schedule;

struct PlanOptions {
  std::string schedule;
  std::string from_file;
  int stages = 0;
  int microbatches = 0;
  int chunks = 0;  // 0: the schedule's natural choice (2 for interleaved and zb-v, else 1)
  CostModel costs;
  std::string format = "text";
  std::string output;
  std::string save_schedule_path;
};

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

void write_json(std::ostream& out, const Schedule& lowered, const SimulationResult& result) {
  out << std::setprecision(17) << "{\"schedule\":" << json_quote(lowered.name) << ",\"stages\":" << lowered.ranks
      << ",\"microbatches\":" << lowered.microbatches << ",\"chunks\":" << lowered.chunks
      << ",\"virtual_stages\":" << lowered.num_stages() << ",\"makespan\":" << result.makespan
      << ",\"bubble_fraction\":" << result.bubble_fraction << ",\"busy\":" << json_array(result.busy)
      << ",\"idle\":" << json_array(result.idle) << ",\"peak_inflight\":" << json_array(result.peak_inflight)
      << ",\"actions\":[";
  for (int rank = 0; rank < lowered.ranks; ++rank) {
    out << (rank ? "," : "") << '[';
    for (size_t i = 0; i < lowered.actions[rank].size(); ++i)
      out << (i ? "," : "") << json_quote(to_string(lowered.actions[rank][i]));
    out << ']';
  }
  out << "]}\n";
}

void write_text(std::ostream& out, const Schedule& lowered, const SimulationResult& result,
                const CostModel& costs) {
  out << "schedule " << lowered.name << ": " << lowered.ranks << " ranks x " << lowered.chunks << " chunk(s), "
      << lowered.microbatches << " micro-batches (F=" << costs.forward << " I=" << costs.backward_input
      << " W=" << costs.backward_weight << " latency=" << costs.latency << ")\n\n"
      << render_ascii(result) << "\n"
      << "makespan " << result.makespan << ", bubble fraction " << std::fixed << std::setprecision(4)
      << result.bubble_fraction << " (" << std::setprecision(2) << 100.0 * result.bubble_fraction << "%)\n"
      << std::defaultfloat << std::setprecision(6) << "rank  busy      idle      peak in-flight\n";
  for (int rank = 0; rank < lowered.ranks; ++rank)
    out << std::left << std::setw(6) << rank << std::setw(10) << result.busy[rank] << std::setw(10)
        << result.idle[rank] << result.peak_inflight[rank] << "\n";
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
  if (chunks == 0) chunks = (options.schedule == "interleaved" || options.schedule == "zb-v") ? 2 : 1;
  return make_schedule(options.schedule, options.stages, options.microbatches, chunks);
}

void run_plan(const PlanOptions& options) {
  check_cost_model(options.costs);
  const Schedule compute = build_schedule(options);
  const Schedule lowered = lower(compute);
  validate(lowered);
  const SimulationResult result = simulate(compute, options.costs);
  if (!options.save_schedule_path.empty()) save_schedule(lowered, options.save_schedule_path);

  std::ofstream file;
  if (!options.output.empty()) {
    file.open(options.output);
    if (!file) throw Error(ErrorCode::kIo, "plan: cannot open output file '" + options.output + "'");
  }
  std::ostream& out = options.output.empty() ? std::cout : file;
  if (options.format == "json") {
    write_json(out, lowered, result);
  } else if (options.format == "svg") {
    out << render_svg(result);
  } else if (options.format == "chrome") {
    write_chrome_trace(out, trace_events(result, kTraceMicrosecondsPerUnit));
  } else {
    write_text(out, lowered, result, options.costs);
  }
  out.flush();
  if (!out) throw Error(ErrorCode::kIo, "plan: failed writing output");
}

}  // namespace

void register_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* plan = app.add_subcommand("plan", "Generate, validate and simulate a pipeline schedule");
  plan->add_option("--schedule", options->schedule, "Schedule to generate")
      ->check(CLI::IsMember(schedule::schedule_names()));
  plan->add_option("--from-file", options->from_file, "Load a schedule (text, or CSV by .csv extension) instead")
      ->check(CLI::ExistingFile);
  plan->add_option("--stages", options->stages, "Pipeline ranks P")->check(CLI::Range(1, 1 << 20));
  plan->add_option("--microbatches", options->microbatches, "Micro-batches M")->check(CLI::Range(1, 1 << 24));
  plan->add_option("--chunks", options->chunks, "Virtual stages per rank V (default 2 for interleaved/zb-v, else 1)")
      ->check(CLI::Range(1, 64));
  plan->add_option("--cost-f", options->costs.forward, "Forward cost per chunk")->check(CLI::NonNegativeNumber);
  plan->add_option("--cost-i", options->costs.backward_input, "Backward-for-input cost")->check(CLI::NonNegativeNumber);
  plan->add_option("--cost-w", options->costs.backward_weight, "Backward-for-weight cost")->check(CLI::NonNegativeNumber);
  plan->add_option("--latency", options->costs.latency, "Per-message latency")->check(CLI::NonNegativeNumber);
  plan->add_option("--bytes", options->costs.bytes_per_message, "Bytes per message")->check(CLI::NonNegativeNumber);
  plan->add_option("--bandwidth", options->costs.bandwidth, "Bytes per time unit")->check(CLI::NonNegativeNumber);
  plan->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "svg", "chrome"}));
  plan->add_option("--output", options->output, "Write to FILE instead of stdout");
  plan->add_option("--save-schedule", options->save_schedule_path, "Also save the lowered schedule (.txt or .csv)");
  plan->callback([options]() { run_plan(*options); });
}

}  // namespace sluice::tools
