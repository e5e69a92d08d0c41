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
  // Plain SGD (the default) keeps the optimizer step (outside the pipeline) cheap; adamw is the optimizer of the
  // PyTorch comparison (torch_pipeline.py: AdamW, lr 1e-4, no weight decay, which are Sluice's adamw defaults).
  yaml << "loss: mse\noptimizer: {type: " << model.optimizer << ", lr: 1.0e-4}\n";
  if (model.cpu_threads > 0) yaml << "cpu_threads: " << model.cpu_threads << "\n";
  yaml << "comm: {wait: " << model.wait << "}\n";
  yaml << "data: {type: synthetic, batch: " << model.batch << "}\nseed: 1\nsteps: 1\n";
  return yaml.str();
}

config::Config bench_config(const BenchModel& model, const std::string& schedule) {
  return config::parse_config(bench_yaml(model, schedule));
}

}  // namespace sluice::bench
