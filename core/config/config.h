// The typed form of a Sluice YAML config. `config_parser` fills it (naming the key and line of any error);
// everything downstream (model builder, partition, schedule, trainer) reads only these structs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config/device_kind.h"
#include "core/config/gemm_precision.h"
#include "core/config/gradient_sum_kind.h"
#include "core/config/checkpoint_samples.h"
#include "core/config/isolated_reads.h"
#include "core/config/layer_spec.h"
#include "core/config/lr_schedule_spec.h"
#include "core/config/normalization_spec.h"
#include "core/config/rank_order.h"
#include "core/config/recompute_halos.h"
#include "core/config/sample_shape.h"
#include "core/config/schedule_setting.h"
#include "core/config/transport_kind.h"
#include "core/config/wait_policy.h"
#include "core/model/loss_kind.h"
#include "core/model/recompute_mode.h"

namespace sluice::config {

enum class OptimizerType { kSgd, kAdamW };
enum class DataType { kSynthetic, kHdf5, kExternal };

// The YAML spellings of the enums above, indexed by value, in the order error messages list them (model::
// loss_kind_names and model::recompute_mode_names spell the loss and recompute values).
inline const std::vector<std::string>& optimizer_type_names() {
  static const std::vector<std::string> names = {"sgd", "adamw"};
  return names;
}
inline const std::string& optimizer_type_name(OptimizerType type) {
  return optimizer_type_names().at(static_cast<std::size_t>(type));
}
inline const std::vector<std::string>& data_type_names() {
  static const std::vector<std::string> names = {"synthetic", "hdf5", "external"};
  return names;
}
inline const std::string& data_type_name(DataType type) { return data_type_names().at(static_cast<std::size_t>(type)); }

struct ModelSpec {
  int64_t inputs = 0;  // features per sample: `model.inputs` given as a count, or the product of its shape
  // `model.inputs` given as a shape [C, D1[, D2[, D3]]] (a field per sample); empty when given as a count.
  SampleShape input_shape;
  std::vector<LayerSpec> layers;  // the layer vocabulary is core/config/layer_spec.h, their shapes sample_shape.h
};

// The shape of one input sample: the field, or rows of `inputs` features.
inline SampleShape input_shape_of(const ModelSpec& model) {
  return model.input_shape.empty() ? SampleShape{model.inputs} : model.input_shape;
}
// Features per output sample (-1 when a custom layer's width is unknown and nothing after it fixes it).
inline int64_t output_features(const ModelSpec& model, const CustomWidths& custom_widths = {}) {
  return features_of(output_shape(model.layers, input_shape_of(model), custom_widths));
}

struct PipelineSpec {
  int stages = 1;                    // pipeline ranks P
  // gpipe | 1f1b | interleaved | zb-h1 | zb-v (core/schedule/schedule_kinds.h) | auto (empty; schedule_setting.h)
  ScheduleSetting schedule = schedule::ScheduleKind::kOneFOneB;
  // auto: schedule, chunks, micro-batches and recompute chosen at start as the shortest simulated step whose peak
  // bytes per rank (parameters, gradients, optimizer state, stash) fit this budget; 0 = no limit
  // (core/runtime/schedule_choice.h).
  double memory_budget = 0;
  // A measured cost profile (`sluice train --profile FILE`, core/schedule/cost_profile.h): auto simulates with it
  // instead of the FLOP estimate, and the trainer lowers its schedule with those costs. Empty: FLOP estimates.
  std::string costs;
  int chunks = 1;                    // model chunks per rank V
  int microbatches = 1;              // M per optimizer step (per data-parallel replica)
  model::RecomputeMode recompute = model::RecomputeMode::kNone;  // none | full | selective
  std::vector<int> recompute_layers; // selective: global layer indices whose activations are recomputed
  // With a domain split, what a recomputed forward does with its layers' halos (core/config/recompute_halos.h):
  // exchange (fill them again: more messages) | stash (keep each halo layer's padded input: more memory).
  // No effect without recompute or without a split.
  RecomputeHalos recompute_halos = RecomputeHalos::kExchange;
  std::vector<int> split;            // optional explicit partition: number of layers in each of P*V chunks
  // What the balanced partition weighs (core/model/partition.h): a chunk's FLOPs ÷ flop_rate plus the bytes of
  // the activations and gradients crossing its two cuts ÷ bandwidth. A wide field at a cut (a U-Net's upper levels,
  // a skip carried past it) can cost more to send than a layer costs to compute.
  double bandwidth = 1e9;   // bytes per second on a link between two stages
  double flop_rate = 1e10;  // FLOPs per second of one rank
  int data_parallel = 0;             // DP replicas; 0 = derive from world size / stages
  // How activations move between stages: mpi (host memory) | staged (device -> host -> MPI -> device) |
  // nccl (device to device) | auto (mpi for device: cpu; for device: cuda on every stage, nccl when every rank
  // of a node has its own GPU, else staged; with mixed devices, mpi on cpu stages and staged on cuda stages).
  // Resolved once at start and agreed across ranks (core/runtime/transport_choice.h).
  TransportKind transport = TransportKind::kAuto;
  // How data-parallel replicas sum their gradients: ordered (host memory + MPI, replicas added in rank order:
  // bit-identical to the sequential run) | nccl (ncclAllReduce on device memory; needs transport nccl) | auto
  // (nccl when the pipeline transport is nccl, else ordered). core/runtime/gradient_sum_choice.h.
  GradientSumKind gradient_sum = GradientSumKind::kAuto;
  // Which world ranks form a pipeline and which a stage's replicas (core/config/rank_order.h): auto |
  // stages_across_nodes | stages_within_node. Resolved once at start from the node map (rank 0 decides).
  RankOrder rank_order = RankOrder::kAuto;
  // Domain parallelism (docs/DOMAIN.md, core/config/domain_layout.h): `pipeline.domain` = blocks per spatial
  // dimension of model.inputs, each sample's field cut into their product (ranks = replicas x stages x blocks);
  // empty or all 1: not split. `pipeline.domain_tile` = the canonical tile at the input resolution, which every
  // spatial reduction is formed over, split or not; when not given, default_domain_tile's (the model's and field's,
  // never the split's). Empty for a model on rows.
  std::vector<int> domain;
  std::vector<int64_t> domain_tile;
};

struct OptimizerSpec {
  OptimizerType type = OptimizerType::kSgd;  // sgd | adamw
  double lr = 1e-3;
  double momentum = 0.0;      // sgd
  double beta1 = 0.9;         // adamw
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double clip_grad_norm = 0.0;  // 0 = no clipping
  // Gradient accumulation across calls: each train_step adds to the gradient and the optimizer steps on every
  // accumulate-th call (core/runtime/trainer.h). 1 = every call is an optimizer step.
  int accumulate = 1;
  // optimizer.lr_schedule (core/config/lr_schedule_spec.h): lr is the base learning rate the schedule scales.
  LrScheduleSpec lr_schedule;
};

// Config section `data`. Optional: a config without it (given = false) reads as {type: external} with no batch,
// which is all the C API needs (each call passes its own batch); `sluice train` refuses it.
struct DataSpec {
  bool given = true;                     // false: the config has no data section
  DataType type = DataType::kSynthetic;  // synthetic | hdf5 | external (the C API passes batches in)
  // Global batch per optimizer call (all replicas together); 0: not configured (external data may leave it out).
  // `sluice train` trains on data.batch / replicas rows per call. Under the C API each call's batch is its own and
  // data.batch is only a default: sluice_train_submitted's batch 0, and the size the planners assume
  // (pipeline.schedule auto, rank_order auto, `sluice plan`; one row per micro-batch when it is 0).
  int64_t batch = 0;
  std::string path;                // hdf5: file
  std::string inputs = "inputs";   // hdf5: dataset names
  std::string targets = "targets";
  // data.replay.capacity (external data only): samples kept by sluice_submit_samples' replay buffer, from which
  // sluice_train_submitted draws its batches (core/runtime/sample_store.h). 0: no replay buffer, each submitted
  // sample is trained on once, in submission order.
  int64_t replay_capacity = 0;
};

struct CheckpointSpec {
  std::string dir;  // empty: no periodic checkpoints
  int every = 0;    // steps between checkpoints; 0 = only on request / preemption
  int keep = 3;     // how many to keep in `dir`
  // auto | always | never: read a checkpoint first in a separate process (sluice-checkpoint-probe) before this
  // process opens it, so a file that crashes libhdf5 becomes an error (checkpoint/isolated_read.h).
  IsolatedReads isolated_reads = IsolatedReads::kAuto;
  // keep | drop: whether checkpoints carry the submitted samples (/samples); keep makes a resume bit-identical,
  // drop keeps the files small and a resume starts with an empty sample store (docs/CHECKPOINT_FORMAT.md).
  CheckpointSamples samples = CheckpointSamples::kKeep;
};

// Config section `comm`: Sluice's own waits for other ranks (core/comm/wait_settings.h, docs/WAITING.md).
struct CommSpec {
  double timeout = 600.0;         // seconds a wait inside a collective call may last; 0 = no bound
  double arrival_timeout = -1.0;  // seconds to wait for a rank to reach a call; 0 = none; < 0 = not given (the
                                  // C API then waits without bound, `sluice train` uses `timeout`)
  WaitPolicy wait = WaitPolicy::kAuto;  // auto | spin | yield | block | adaptive (core/comm/wait_policy.h)
};

struct Config {
  ModelSpec model;
  PipelineSpec pipeline;
  model::LossKind loss = model::LossKind::kMse;  // mse | cross_entropy
  OptimizerSpec optimizer;
  DataSpec data;
  CheckpointSpec checkpoint;
  CommSpec comm;
  // Config section `normalization` (core/config/normalization_spec.h, core/runtime/normalization.h).
  NormalizationSpec normalization;
  // Config key `device`: cpu | cuda for each pipeline stage (a pipeline rank with all its model chunks; its
  // data-parallel replicas use the same device). One entry means every stage (`device: cuda`); otherwise exactly
  // pipeline.stages entries in stage order (`device: [cuda, cuda, cpu, cpu]`). Kept as written, not expanded, so
  // it stays right when code changes pipeline.stages after parsing; read it through the helpers below.
  std::vector<DeviceKind> devices = {DeviceKind::kCpu};
  // Config key `precision` (alias `gemm_precision`): fp32 | tf32 | bf16 (bf16 operands, fp32 accumulation, fp32
  // master weights). bf16 applies to every stage (a cpu stage needs avx512_bf16, checked when its backend starts);
  // tf32 needs at least one cuda stage and applies only to the cuda stages, the CPU having no TF32 mode.
  GemmPrecision gemm_precision = GemmPrecision::kFp32;
  // Config key `cpu_threads`: kernel threads of a rank whose stage runs on the cpu. auto = the cores this rank owns
  // (its affinity mask when the launcher bound it, else the node's cores shared out among the node's ranks);
  // keep = leave the process's setting alone; N = exactly N, refused at start when above the cores in the rank's
  // affinity mask. Not given (kDefault): auto under `sluice train`, keep under the C API, where the host owns its
  // threads (core/runtime/cpu_threads.h).
  struct CpuThreads {
    enum class Mode { kDefault, kAuto, kKeep, kFixed };
    Mode mode = Mode::kDefault;
    int count = 0;  // kFixed only
  };
  CpuThreads cpu_threads;
  uint64_t seed = 1;
  int steps = 1;
  bool steps_given = false;  // the config has a `steps` key (the C API has no last step without one)
  std::string text;  // the YAML text after --set overrides (stored in checkpoints)

  // The device of pipeline stage `stage` (0 .. pipeline.stages-1); std::out_of_range past the list.
  DeviceKind device_for_stage(int stage) const {
    return devices.size() == 1 ? devices.front() : devices.at(static_cast<std::size_t>(stage));
  }
  // The precision stage `stage` computes its GEMMs in: the configured one, except tf32 on a cpu stage, which
  // computes in fp32 (the CPU has no TF32 mode; a mixed pipeline asks for tf32 for its cuda stages).
  GemmPrecision gemm_precision_for_stage(int stage) const {
    const bool tf32_on_cpu = gemm_precision == GemmPrecision::kTf32 && device_for_stage(stage) == DeviceKind::kCpu;
    return tf32_on_cpu ? GemmPrecision::kFp32 : gemm_precision;
  }
  // Whether some stage runs on `device` (kCuda: the job needs GPUs).
  bool any_stage_on(DeviceKind device) const {
    for (DeviceKind each : devices) {
      if (each == device) return true;
    }
    return false;
  }
};

}  // namespace sluice::config
