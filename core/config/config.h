// The typed form of a Sluice YAML config. `config_parser` fills it (naming the key and line of any error);
// everything downstream (model builder, partition, schedule, trainer) reads only these structs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sluice::config {

// One entry of `model.layers`. Only the fields that matter for `type` are read; the parser rejects keys a
// type does not know.
struct LayerSpec {
  std::string type;          // linear | relu | gelu | tanh | layernorm | dropout | residual_mlp | custom
  int64_t outputs = 0;       // linear: output features
  int64_t hidden = 0;        // residual_mlp: hidden width of its inner Linear -> act -> Linear
  std::string activation;    // residual_mlp: relu | gelu | tanh (default gelu)
  double p = 0.0;            // dropout probability
  double eps = 1e-5;         // layernorm epsilon
  bool bias = true;          // linear: with bias
  std::string name;          // custom: name the application registered the layer under
  int line = 0;              // 1-based line in the YAML text, for error messages (0 if unknown)
};

struct ModelSpec {
  int64_t inputs = 0;
  std::vector<LayerSpec> layers;
};

struct PipelineSpec {
  int stages = 1;                    // pipeline ranks P
  std::string schedule = "1f1b";     // gpipe | 1f1b | interleaved | zb-h1 | zb-v (names of `sluice plan`)
  int chunks = 1;                    // model chunks per rank V
  int microbatches = 1;              // M per optimizer step (per data-parallel replica)
  std::string recompute = "none";    // none | full | selective
  std::vector<int> recompute_layers; // selective: global layer indices whose activations are recomputed
  std::vector<int> split;            // optional explicit partition: number of layers in each of P*V chunks
  int data_parallel = 0;             // DP replicas; 0 = derive from world size / stages
  // How activations move between stages: mpi (host memory) | staged (device -> host -> MPI -> device) |
  // nccl (device to device) | auto (mpi for device: cpu; for device: cuda, nccl when every rank of a node has
  // its own GPU, else staged). Resolved once at start, the same on every rank (core/runtime/transport_choice.h).
  std::string transport = "auto";
};

struct OptimizerSpec {
  std::string type = "sgd";  // sgd | adamw
  double lr = 1e-3;
  double momentum = 0.0;      // sgd
  double beta1 = 0.9;         // adamw
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double clip_grad_norm = 0.0;  // 0 = no clipping
};

struct DataSpec {
  std::string type = "synthetic";  // synthetic | hdf5 | external (the C API passes batches in)
  int64_t batch = 0;               // global batch per optimizer step (all replicas together)
  std::string path;                // hdf5: file
  std::string inputs = "inputs";   // hdf5: dataset names
  std::string targets = "targets";
};

struct CheckpointSpec {
  std::string dir;  // empty: no periodic checkpoints
  int every = 0;    // steps between checkpoints; 0 = only on request / preemption
  int keep = 3;     // how many to keep in `dir`
};

struct Config {
  ModelSpec model;
  PipelineSpec pipeline;
  std::string loss = "mse";  // mse | cross_entropy
  OptimizerSpec optimizer;
  DataSpec data;
  CheckpointSpec checkpoint;
  std::string device = "cpu";  // cpu | cuda
  // GEMM arithmetic: fp32 | tf32 | bf16 (bf16 operands, fp32 accumulation, fp32 master weights). Only fp32 on
  // device: cpu; tf32 and bf16 need device: cuda.
  std::string gemm_precision = "fp32";
  uint64_t seed = 1;
  int steps = 1;
  std::string text;  // the YAML text after --set overrides (stored in checkpoints)
};

}  // namespace sluice::config
