// The model and pipeline configuration the pipeline benchmark trains: a stack of equal-width linear+gelu
// layers, wide enough that GEMMs dominate per-action overheads and messages. Every schedule is timed on the
// same Config except for the schedule name and the chunks it needs.
#pragma once

#include <string>

#include "core/config/config.h"

namespace sluice::bench {

struct BenchModel {
  int width = 1024;        // features of every layer (and of the inputs and targets)
  int layers = 8;          // linear+gelu pairs
  int batch = 256;         // global batch rows per optimizer step
  int microbatches = 8;    // M
  int stages = 2;          // pipeline ranks P
  std::string optimizer = "sgd";  // sgd | adamw (config optimizer.type; the PyTorch comparison uses adamw)
  int cpu_threads = 0;     // config cpu_threads (kernel threads per rank); 0 = not set, the process's setting
  std::string wait = "auto";  // config comm.wait: how a rank waits for a message (auto | spin | yield | block)
};

// Model chunks per rank the schedule runs with: 2 for interleaved and zb-v (the V needs exactly 2), else 1.
int chunks_for(const std::string& schedule);

// The YAML text of the benchmark config for `schedule`; parsed by config::parse_config like any user config.
std::string bench_yaml(const BenchModel& model, const std::string& schedule);

// parse_config(bench_yaml(...)); throws sluice::Error(kConfig) if the sizes are invalid (e.g. batch not a
// multiple of microbatches is caught later by the trainer with its own message).
config::Config bench_config(const BenchModel& model, const std::string& schedule);

}  // namespace sluice::bench
