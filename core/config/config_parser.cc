#include "core/config/config_parser.h"

#include <yaml-cpp/depthguard.h>  // YAML::DeepRecursion, not included by yaml.h in 0.7
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/checked_math.h"
#include "core/common/error.h"
#include "core/common/message_text.h"
#include "core/config/comm_parser.h"
#include "core/config/config_node.h"
#include "core/config/domain_parser.h"
#include "core/config/layer_spec_parser.h"
#include "core/config/size_bounds.h"
#include "core/config/lr_schedule_parser.h"
#include "core/config/normalization_parser.h"
#include "core/config/yaml_overrides.h"
#include "core/config/yaml_strict.h"
#include "core/schedule/schedule_kinds.h"

namespace sluice::config {

namespace {

[[noreturn]] void fail(const std::string& problem) { throw Error(ErrorCode::kConfig, "config: " + problem); }
// A config file that is missing or unreadable is a file-system problem, not a malformed config: kIo (the C API's
// SLUICE_ERROR_IO, as sluice.h documents for sluice_trainer_create).
[[noreturn]] void file_fail(const std::string& problem) { throw Error(ErrorCode::kIo, "config: " + problem); }

struct Source {
  std::string text;
  std::string file;  // empty when the argument was YAML text
};

bool looks_like_a_path(const std::string& text) {
  if (text.find('\n') != std::string::npos || text.find(':') != std::string::npos) return false;
  auto ends_with = [&](const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".yaml") || ends_with(".yml");
}

Source read_source(const std::string& yaml_text_or_path) {
  std::error_code ignored;
  if (yaml_text_or_path.find('\n') == std::string::npos &&
      std::filesystem::is_regular_file(yaml_text_or_path, ignored)) {
    std::ifstream file(yaml_text_or_path);
    if (!file) file_fail("cannot read config file \"" + shorten_for_message(yaml_text_or_path) + "\"");
    std::ostringstream text;
    text << file.rdbuf();
    return {text.str(), yaml_text_or_path};
  }
  // Without this, a mistyped path would be parsed as a YAML scalar and fail with a puzzling message.
  if (looks_like_a_path(yaml_text_or_path)) {
    file_fail("config file \"" + shorten_for_message(yaml_text_or_path) + "\" does not exist");
  }
  return {yaml_text_or_path, ""};
}

YAML::Node load_yaml(const Source& source) {
  try {
    const std::string where = source.file.empty() ? "" : "config file \"" + shorten_for_message(source.file) + "\"";
    YAML::Node root = load_one_document(source.text, where);
    require_unique_keys(root, "", where);
    return root;
  } catch (const YAML::DeepRecursion& error) {
    // yaml-cpp's guard against stack exhaustion says only "bad file": name what is wrong.
    const std::string where = source.file.empty() ? "" : " in \"" + shorten_for_message(source.file) + "\"";
    fail("YAML nested too deeply" + where + ": lists/maps inside one another beyond the parser's depth limit at line " +
         std::to_string(error.mark.line + 1) + ", column " + std::to_string(error.mark.column + 1) +
         " (a config needs a handful of levels)");
  } catch (const YAML::Exception& error) {
    const std::string where = source.file.empty() ? "" : " in \"" + shorten_for_message(source.file) + "\"";
    fail("YAML syntax error" + where + " at line " + std::to_string(error.mark.line + 1) + ", column " +
         std::to_string(error.mark.column + 1) + ": " + error.msg);
  }
}

int positive_int(const ConfigNode& node) {
  const int value = node.as_int32();
  if (value <= 0) node.fail("expected a positive integer, got " + node.describe_value());
  return value;
}

int non_negative_int(const ConfigNode& node) {
  const int value = node.as_int32();
  if (value < 0) node.fail("expected a non-negative integer, got " + node.describe_value());
  return value;
}

double number_in(const ConfigNode& node, double low, bool low_inclusive, double high, const std::string& rule) {
  const double value = node.as_double();
  const bool above = low_inclusive ? value >= low : value > low;
  if (!(above && value < high)) node.fail("expected " + rule + ", got " + node.describe_value());
  return value;
}

// A value that must be one of `names` (error lists them), as the enum whose values index `names`.
template <typename Enum>
Enum as_enum(const ConfigNode& node, const std::vector<std::string>& names) {
  const std::string name = node.as_choice(names);
  return static_cast<Enum>(std::find(names.begin(), names.end(), name) - names.begin());
}

// `model.inputs`: a feature count, or a field's shape [C, D1[, D2[, D3]]] of positive extents.
void parse_model_inputs(const ConfigNode& inputs, ModelSpec& model) {
  if (!inputs.is_sequence()) {
    model.inputs = inputs.as_int();
    if (model.inputs <= 0) inputs.fail("expected a positive integer, got " + inputs.describe_value());
    return;
  }
  const std::vector<ConfigNode> extents = inputs.elements();
  if (extents.size() < 2 || extents.size() > 4) {
    inputs.fail("expected a feature count or a shape [channels, extent1[, extent2[, extent3]]], got " +
                std::to_string(extents.size()) + " values");
  }
  model.inputs = 1;
  for (const ConfigNode& extent : extents) {
    const int64_t value = extent.as_int();
    if (value <= 0) extent.fail("expected a positive extent, got " + extent.describe_value());
    model.input_shape.push_back(value);
    model.inputs = checked_mul(model.inputs, value, "model.inputs", ErrorCode::kConfig);
  }
}

// Every layer can take what the layer before gives (a conv needs a field, a linear layer rows, a kernel must fit):
// checked here so the error names the layer's entry and line.
void check_layer_shapes(const ConfigNode& layers, const ModelSpec& model) {
  const std::vector<ConfigNode> entries = layers.elements();
  ShapeWalk walk(input_shape_of(model));
  for (size_t i = 0; i < model.layers.size(); ++i) {
    try {
      walk.next(model.layers[i]);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kConfig) throw;
      entries[i].fail(e.what());
    }
  }
}

ModelSpec parse_model(const ConfigNode& node) {
  node.require_map_with_keys({"inputs", "layers"}, "model");
  ModelSpec model;
  parse_model_inputs(node.child("inputs"), model);
  model.layers = parse_layer_specs(node.child("layers"));
  check_layer_shapes(node.child("layers"), model);
  return model;
}

// pipeline.recompute_layers: only with recompute: selective, each a layer index of the model.
void parse_recompute_layers(const ConfigNode& node, std::size_t layer_count, PipelineSpec& pipeline) {
  if (node.has("recompute_layers")) {
    const ConfigNode list = node.child("recompute_layers");
    if (pipeline.recompute != model::RecomputeMode::kSelective) {
      list.fail("recompute_layers only applies with recompute: selective (recompute is \"" +
                model::recompute_mode_name(pipeline.recompute) + "\")");
    }
    pipeline.recompute_layers = list.as_int_list();
    const std::vector<ConfigNode> entries = list.elements();
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const int layer = pipeline.recompute_layers[i];
      if (layer < 0 || static_cast<std::size_t>(layer) >= layer_count) {
        entries[i].fail("layer index " + std::to_string(layer) + " is out of range: the model has " +
                        std::to_string(layer_count) + " layers (0.." + std::to_string(layer_count - 1) + ")");
      }
    }
  }
  if (pipeline.recompute == model::RecomputeMode::kSelective && pipeline.recompute_layers.empty()) {
    node.fail("recompute: selective needs recompute_layers, a non-empty list of layer indices");
  }
}

// pipeline.split: stages x chunks positive layer counts that add up to the model's layers.
void parse_split(const ConfigNode& split, std::size_t layer_count, PipelineSpec& pipeline) {
  pipeline.split = split.as_int_list();
  const std::size_t chunk_count = static_cast<std::size_t>(pipeline.stages) * pipeline.chunks;
  if (pipeline.split.size() != chunk_count) {
    split.fail("expected stages * chunks = " + std::to_string(pipeline.stages) + " * " +
               std::to_string(pipeline.chunks) + " = " + std::to_string(chunk_count) + " entries, got " +
               std::to_string(pipeline.split.size()));
  }
  std::size_t total = 0;
  const std::vector<ConfigNode> entries = split.elements();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (pipeline.split[i] <= 0) entries[i].fail("every chunk needs at least one layer, got " + entries[i].describe_value());
    total += static_cast<std::size_t>(pipeline.split[i]);
  }
  if (total != layer_count) {
    split.fail("the entries add up to " + std::to_string(total) + " layers but the model has " +
               std::to_string(layer_count));
  }
}

// The chunks each schedule runs (core/schedule/schedule_kinds.h, which make_schedule enforces too). Checked here so
// that a mismatch is a config error at create naming the key and line, not a schedule error at start.
void check_schedule_chunks(const ConfigNode& node, const PipelineSpec& pipeline) {
  const ScheduleSetting& kind = pipeline.schedule;
  if (!kind || schedule::chunks_allowed(*kind, pipeline.chunks)) return;  // auto: the search picks the chunks
  const std::string problem = "schedule " + schedule_setting_name(kind) + " needs pipeline." +
                              schedule::chunks_requirement(*kind) + ", got chunks = " + std::to_string(pipeline.chunks);
  // Name the key the user wrote: chunks when given, else the schedule that asks for other chunks than the default.
  if (node.has("chunks")) node.child("chunks").fail(problem);
  node.child("schedule").fail(problem + (node.has("chunks") ? "" : " (the default)"));
}

PipelineSpec parse_pipeline(const ConfigNode& node, std::size_t layer_count) {
  node.require_map_with_keys(
      {"stages", "schedule", "chunks", "microbatches", "recompute", "recompute_layers", "recompute_halos", "split",
       "data_parallel", "transport", "gradient_sum", "rank_order", "memory_budget", "costs", "bandwidth", "flop_rate",
       "domain", "domain_tile"},
      "pipeline");
  PipelineSpec pipeline;
  if (node.has("stages")) pipeline.stages = positive_int(node.child("stages"));
  if (node.has("schedule")) {
    pipeline.schedule = schedule_setting_named(node.child("schedule").as_choice(schedule_setting_names()));
  }
  if (node.has("memory_budget"))
    pipeline.memory_budget = number_in(node.child("memory_budget"), 0.0, true, 1e30, "bytes per rank >= 0");
  if (node.has("costs")) pipeline.costs = node.child("costs").as_string();
  if (node.has("bandwidth")) {
    pipeline.bandwidth = number_in(node.child("bandwidth"), 0.0, false, 1e30, "bytes per second > 0");
  }
  if (node.has("flop_rate")) {
    pipeline.flop_rate = number_in(node.child("flop_rate"), 0.0, false, 1e30, "FLOPs per second > 0");
  }
  if (node.has("chunks")) pipeline.chunks = positive_int(node.child("chunks"));
  if (node.has("microbatches")) pipeline.microbatches = positive_int(node.child("microbatches"));
  if (node.has("data_parallel")) pipeline.data_parallel = positive_int(node.child("data_parallel"));
  if (node.has("recompute")) {
    pipeline.recompute = as_enum<model::RecomputeMode>(node.child("recompute"), model::recompute_mode_names());
  }
  if (node.has("recompute_halos")) {
    pipeline.recompute_halos = node.child("recompute_halos").as_choice(recompute_halos_choices());
  }
  if (node.has("transport")) {
    pipeline.transport = node.child("transport").as_choice(transport_kinds());
  }
  if (node.has("gradient_sum")) {
    pipeline.gradient_sum = node.child("gradient_sum").as_choice(gradient_sum_kinds());
  }
  if (node.has("rank_order")) pipeline.rank_order = node.child("rank_order").as_choice(rank_order_choices());
  check_schedule_chunks(node, pipeline);
  parse_recompute_layers(node, layer_count, pipeline);
  if (node.has("split")) parse_split(node.child("split"), layer_count, pipeline);
  return pipeline;
}

OptimizerSpec parse_optimizer(const ConfigNode& node) {
  OptimizerSpec optimizer;
  if (!node.is_map()) node.fail("expected the optimizer (a map), got " + node.describe_value());
  optimizer.type = as_enum<OptimizerType>(node.child("type"), optimizer_type_names());
  if (optimizer.type == OptimizerType::kSgd) {
    node.require_map_with_keys({"type", "lr", "momentum", "weight_decay", "clip_grad_norm", "accumulate", "lr_schedule"},
                               "optimizer sgd");
    if (node.has("momentum"))
      optimizer.momentum = number_in(node.child("momentum"), 0.0, true, 1.0, "0 <= momentum < 1");
  } else {
    node.require_map_with_keys({"type", "lr", "beta1", "beta2", "eps", "weight_decay", "clip_grad_norm", "accumulate",
                                "lr_schedule"},
                               "optimizer adamw");
    if (node.has("beta1")) optimizer.beta1 = number_in(node.child("beta1"), 0.0, true, 1.0, "0 <= beta1 < 1");
    if (node.has("beta2")) optimizer.beta2 = number_in(node.child("beta2"), 0.0, true, 1.0, "0 <= beta2 < 1");
    if (node.has("eps")) optimizer.eps = number_in(node.child("eps"), 0.0, false, HUGE_VAL, "a positive number");
  }
  if (node.has("lr")) optimizer.lr = number_in(node.child("lr"), 0.0, false, HUGE_VAL, "a positive learning rate");
  if (node.has("weight_decay")) {
    optimizer.weight_decay = number_in(node.child("weight_decay"), 0.0, true, HUGE_VAL, "a non-negative number");
  }
  if (node.has("clip_grad_norm")) {
    optimizer.clip_grad_norm =
        number_in(node.child("clip_grad_norm"), 0.0, true, HUGE_VAL, "a non-negative number (0 = no clipping)");
  }
  if (node.has("accumulate")) optimizer.accumulate = positive_int(node.child("accumulate"));
  if (node.has("lr_schedule")) optimizer.lr_schedule = parse_lr_schedule(node.child("lr_schedule"));
  return optimizer;
}

// data.replay: {capacity: N}, N > 0 samples. Only external data has it: `sluice train` reads its data sources by
// step and has no submitted samples to replay, so the key is refused there rather than ignored.
int64_t parse_replay_capacity(const ConfigNode& node) {
  if (!node.is_map()) node.fail("expected {capacity: N} (samples kept for replay), got " + node.describe_value());
  node.require_map_with_keys({"capacity"}, "data.replay");
  const ConfigNode capacity = node.child("capacity");
  const int64_t value = capacity.as_int();
  if (value <= 0) capacity.fail("expected a positive number of samples, got " + capacity.describe_value());
  return value;
}

DataSpec parse_data(const ConfigNode& node) {
  DataSpec data;
  if (!node.is_map()) node.fail("expected the data section (a map), got " + node.describe_value());
  data.type = as_enum<DataType>(node.child("type"), data_type_names());
  if (data.type == DataType::kHdf5) {
    node.require_map_with_keys({"type", "batch", "path", "inputs", "targets"}, "data hdf5");
    const ConfigNode path = node.child("path");
    data.path = path.as_string();
    if (data.path.empty()) path.fail("data type hdf5 needs the path of an HDF5 file");
    if (node.has("inputs")) data.inputs = node.child("inputs").as_string();
    if (node.has("targets")) data.targets = node.child("targets").as_string();
  } else if (data.type == DataType::kExternal) {
    node.require_map_with_keys({"type", "batch", "replay"}, "data external");
    if (node.has("replay")) data.replay_capacity = parse_replay_capacity(node.child("replay"));
    if (!node.has("batch")) return data;  // optional: each API call passes its own batch
  } else {
    node.require_map_with_keys({"type", "batch"}, "data " + data_type_name(data.type));
  }
  const ConfigNode batch = node.child("batch");
  data.batch = batch.as_int();
  if (data.batch <= 0) batch.fail("expected a positive integer, got " + batch.describe_value());
  return data;
}

CheckpointSpec parse_checkpoint(const ConfigNode& node) {
  node.require_map_with_keys({"dir", "every", "keep", "isolated_reads", "samples"}, "checkpoint");
  CheckpointSpec checkpoint;
  if (node.has("dir")) checkpoint.dir = node.child("dir").as_string();
  if (node.has("every")) checkpoint.every = non_negative_int(node.child("every"));
  if (node.has("keep")) checkpoint.keep = positive_int(node.child("keep"));
  if (node.has("isolated_reads")) {
    checkpoint.isolated_reads = node.child("isolated_reads").as_choice(isolated_reads_choices());
  }
  if (node.has("samples")) checkpoint.samples = node.child("samples").as_choice(checkpoint_samples_choices());
  if (checkpoint.every > 0 && checkpoint.dir.empty()) {
    node.child("every").fail("periodic checkpoints need checkpoint.dir");
  }
  return checkpoint;
}

// `device: cuda` (every stage) or `device: [cuda, cuda, cpu, cpu]` (one entry per pipeline stage, in order).
std::vector<DeviceKind> parse_devices(const ConfigNode& node, int stages) {
  if (!node.is_sequence()) return {node.as_choice(device_kinds())};
  const std::vector<ConfigNode> entries = node.elements();
  if (entries.size() != static_cast<std::size_t>(stages)) {
    node.fail("expected one device per stage (" + std::to_string(stages) + "), got " +
              std::to_string(entries.size()) + "; or write one device for all stages (device: cpu)");
  }
  std::vector<DeviceKind> devices;
  // Errors name device.<i>.
  for (const ConfigNode& entry : entries) devices.push_back(entry.as_choice(device_kinds()));
  return devices;
}

// "stage 2" / "stages 0, 3": the stages of `config` whose device is `device`, for messages.
std::string stages_on(const Config& config, DeviceKind device) {
  std::vector<std::string> listed;
  for (int stage = 0; stage < config.pipeline.stages; ++stage) {
    if (config.device_for_stage(stage) == device) listed.push_back(std::to_string(stage));
  }
  return (listed.size() == 1 ? "stage " : "stages ") + join_names(listed);
}

// "precision", or "gemm_precision" where only the alias is given: the key a message about the setting names.
std::string precision_key(const ConfigNode& root) {
  return root.has("gemm_precision") && !root.has("precision") ? "gemm_precision" : "precision";
}

// Keys that only mean something on a GPU, refused with both keys named when no stage has one (the CPU would
// otherwise silently compute something other than what was asked for). With some cuda stages, precision tf32
// applies to those only (the trainer keeps cpu stages in fp32); nccl needs every stage on cuda.
void check_device_keys(const ConfigNode& root, const Config& config) {
  if (config.any_stage_on(DeviceKind::kCuda)) {
    for (size_t i = 0; i < config.model.layers.size(); ++i) {
      const LayerType type = config.model.layers[i].type;
      if (runs_on_cuda(type)) continue;
      root.child("model").child("layers").elements()[i].fail(
          layer_type_name(type) + " has CPU kernels only in this version (device is cuda on " +
          stages_on(config, DeviceKind::kCuda) + "; every layer must run on its stage's device): use device: cpu");
    }
  }
  if (config.pipeline.transport == TransportKind::kNccl && config.any_stage_on(DeviceKind::kCpu)) {
    const bool all_cpu = !config.any_stage_on(DeviceKind::kCuda);
    const std::string where = all_cpu ? "device is \"cpu\"" : "device is cpu on " + stages_on(config, DeviceKind::kCpu);
    root.child("pipeline").child("transport").fail(
        "transport: nccl moves device memory and needs device: cuda on every stage (" + where + "); use " +
        (all_cpu ? "mpi or auto" : "auto (mpi on cpu stages, staged on cuda stages) or staged"));
  }
  if (config.pipeline.gradient_sum == GradientSumKind::kNccl && config.any_stage_on(DeviceKind::kCpu)) {
    root.child("pipeline").child("gradient_sum").fail(
        "gradient_sum: nccl sums device memory and needs device: cuda on every stage (device is cpu on " +
        stages_on(config, DeviceKind::kCpu) + "); use ordered or auto");
  }
  // bf16 runs on cpu stages too (oneDNN, checked against the CPU when the backend starts); tf32 has no CPU mode.
  if (config.gemm_precision == GemmPrecision::kTf32 && !config.any_stage_on(DeviceKind::kCuda)) {
    const std::string key = precision_key(root);
    root.child(key).fail(key + ": tf32 needs device: cuda on at least one stage; the CPU backend has no TF32 mode "
                               "(device is \"cpu\" on every stage; use fp32, or bf16 where the CPU has avx512_bf16)");
  }
}

// Config key `precision`, or its alias `gemm_precision` (the name before issue 30): one setting, so both at once
// is an error naming both keys and where each is.
void parse_precision(const ConfigNode& root, Config& config) {
  if (root.has("precision") && root.has("gemm_precision")) {
    const ConfigNode alias = root.child("gemm_precision");
    const std::string where = alias.location().empty() ? "" : " " + alias.location();
    root.child("precision").fail("precision and gemm_precision" + where +
                                 " are one setting (gemm_precision is its old name): give only precision");
  }
  const std::string key = precision_key(root);
  if (root.has(key)) config.gemm_precision = root.child(key).as_choice(gemm_precisions());
}

// cpu_threads: auto | keep | a positive integer.
Config::CpuThreads parse_cpu_threads(const ConfigNode& node) {
  Config::CpuThreads threads;
  const std::string text = node.as_string();
  if (text == "auto" || text == "keep") {
    threads.mode = text == "auto" ? Config::CpuThreads::Mode::kAuto : Config::CpuThreads::Mode::kKeep;
    return threads;
  }
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    node.fail("cpu_threads must be auto, keep or a positive integer, got " + node.describe_value());
  }
  threads.mode = Config::CpuThreads::Mode::kFixed;
  threads.count = positive_int(node);
  return threads;
}

Config parse_tree(const ConfigNode& root) {
  root.require_map_with_keys(
      {"model", "pipeline", "loss", "optimizer", "data", "checkpoint", "comm", "device", "precision",
       "gemm_precision", "cpu_threads", "seed",
       "steps", "normalization"},
      "the config");
  Config config;
  config.model = parse_model(root.child("model"));
  if (root.has("pipeline")) config.pipeline = parse_pipeline(root.child("pipeline"), config.model.layers.size());
  parse_domain(root, config);  // pipeline.domain, domain_tile (domain_parser.cc)
  if (root.has("loss")) {
    // On a field output, cross_entropy is the softmax over the channels at each point (core/model/loss.h).
    config.loss = as_enum<model::LossKind>(root.child("loss"), model::loss_kind_names());
  }
  if (root.has("optimizer")) config.optimizer = parse_optimizer(root.child("optimizer"));
  // Optional: without it the samples come from the C API's calls (data.type external, no data.batch); `sluice
  // train`, which reads its samples from the section, refuses a config without it (train_command.cc).
  if (root.has("data")) {
    config.data = parse_data(root.child("data"));
  } else {
    config.data.type = DataType::kExternal;
    config.data.given = false;
  }
  if (root.has("normalization")) {
    config.normalization =
        parse_normalization(root.child("normalization"), config.model.inputs, output_features(config.model),
                            config.loss, field_channels(input_shape_of(config.model)),
                            field_channels(output_shape(config.model.layers, input_shape_of(config.model))));
  }
  if (root.has("checkpoint")) config.checkpoint = parse_checkpoint(root.child("checkpoint"));
  if (root.has("comm")) config.comm = parse_comm(root.child("comm"));
  if (root.has("device")) config.devices = parse_devices(root.child("device"), config.pipeline.stages);
  parse_precision(root, config);
  check_device_keys(root, config);
  if (root.has("cpu_threads")) config.cpu_threads = parse_cpu_threads(root.child("cpu_threads"));
  check_size_bounds(root, config);
  if (root.has("seed")) config.seed = root.child("seed").as_uint64();
  if (root.has("steps")) {
    config.steps = positive_int(root.child("steps"));
    config.steps_given = true;
  }
  if (root.has("optimizer")) {  // the horizon may default to `steps`, parsed last
    resolve_lr_horizon(root.child("optimizer"), config.steps_given, config.steps, config.optimizer.lr_schedule);
  }
  return config;
}

}  // namespace

Config parse_config(const std::string& yaml_text_or_path, const std::vector<std::string>& overrides) {
  const Source source = read_source(yaml_text_or_path);
  YAML::Node root = load_yaml(source);
  if (!root.IsDefined() || root.IsNull()) {
    if (overrides.empty()) fail("the config is empty; it needs at least the section model (and data for sluice train)");
    root.reset(YAML::Node(YAML::NodeType::Map));
  }

  OverrideSources sources;
  for (const std::string& assignment : overrides) sources.record(apply_override(root, assignment), assignment);

  Config config = parse_tree(ConfigNode(root, "", &sources));
  if (overrides.empty()) {
    config.text = source.text;  // keeps the user's comments and layout
  } else {
    YAML::Emitter emitter;
    emitter << root;
    config.text = std::string(emitter.c_str()) + "\n";
  }
  return config;
}

}  // namespace sluice::config
