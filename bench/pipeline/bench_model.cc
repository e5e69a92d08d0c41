#include "bench/pipeline/bench_model.h"

#include <sstream>

#include "core/config/config_parser.h"

namespace sluice::bench {

int chunks_for(const std::string& schedule) {
  return schedule == "interleaved" || schedule == "zb-v" ? 2 : 1;
}

std::string bench_yaml(const BenchModel& model, const std::string& schedule) {
  std::ostringstream yaml;
  yaml << "model:\n  inputs: " << model.width << "\n  layers:\n";
  for (int l = 0; l < model.layers; ++l) {
    yaml << "    - {type: linear, outputs: " << model.width << "}\n    - {type: gelu}\n";
  }
  yaml << "pipeline: {stages: " << model.stages << ", schedule: " << schedule << ", chunks: " << chunks_for(schedule)
       << ", microbatches: " << model.microbatches << ", recompute: none}\n";
  // Plain SGD keeps the optimizer step (outside the pipeline, counted as idle by the measured bubble) cheap.
  yaml << "loss: mse\noptimizer: {type: sgd, lr: 1.0e-4}\n";
  yaml << "data: {type: synthetic, batch: " << model.batch << "}\nseed: 1\nsteps: 1\n";
  return yaml.str();
}

config::Config bench_config(const BenchModel& model, const std::string& schedule) {
  return config::parse_config(bench_yaml(model, schedule));
}

}  // namespace sluice::bench
