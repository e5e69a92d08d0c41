// Each layer's share of the partitioner's cost estimate (model::partition_costs: LayerShape::flops, forward + input
// gradient + weight gradient per sample) against its share of the measured F + I + W time, on one thread (issue 29
// item 3). The layers are built by the model builder from a training config, as a stage builds them; each round
// runs every layer's forward in model order, then its backward_input and backward_weight in reverse order, and the
// table takes each piece's median over the rounds. Results go to bench/README.md ("FLOP share").
// Run: bazel-bin/bench/flop_share/flop_share_bench CONFIG [--rows N] [--rounds R]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include "CLI/CLI.hpp"
#include "core/config/config_parser.h"
#include "core/model/builder.h"
#include "core/model/model_shape.h"
#include "core/model/partition.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"

namespace {

using Clock = std::chrono::steady_clock;
using sluice::kernels::Tensor;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

Tensor random_tensor(sluice::kernels::Backend& backend, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(rows * cols));
  for (float& v : values) v = normal(rng);
  return backend.from_host(rows, cols, values.data());
}

// seconds[layer] = {F, I, W} of one round.
using RoundTimes = std::vector<std::array<double, 3>>;

RoundTimes one_round(std::vector<std::unique_ptr<sluice::model::Layer>>& layers, sluice::kernels::Backend& backend,
                     int64_t rows, std::mt19937& rng) {
  RoundTimes times(layers.size());
  std::vector<sluice::model::LayerSaved> saved(layers.size());
  Tensor x = random_tensor(backend, rows, layers.front()->in_features(), rng);
  for (size_t l = 0; l < layers.size(); ++l) {
    sluice::model::ForwardContext context;
    context.layer_index = static_cast<int>(l);
    const Clock::time_point start = Clock::now();
    x = layers[l]->forward(std::move(x), context, saved[l]);
    times[l][0] = seconds_since(start);
  }
  Tensor dy = random_tensor(backend, rows, layers.back()->out_features(), rng);
  for (size_t l = layers.size(); l-- > 0;) {
    Clock::time_point start = Clock::now();
    Tensor dx = layers[l]->backward_input(dy, saved[l]);
    times[l][1] = seconds_since(start);
    start = Clock::now();
    layers[l]->backward_weight(dy, saved[l]);
    times[l][2] = seconds_since(start);
    dy = std::move(dx);
  }
  return times;
}

// A what-if for the estimate, not the partitioner's: time = a x FLOPs + b x bytes fitted over the layers by least
// squares of the relative error (so small layers count as much as large ones; bytes: each layer's input and output,
// read and written once by each of F, I and W), printed as b / a, the FLOP-equivalents one byte moved costs, and
// each layer's share under FLOPs + (b / a) x bytes.
std::vector<double> with_bytes_term(const std::vector<double>& flops, const std::vector<double>& bytes,
                                    const std::vector<double>& seconds, double& flops_per_byte) {
  double ff = 0, fb = 0, bb = 0, f1 = 0, b1 = 0;  // normal equations of (f/t) a + (B/t) b = 1
  for (size_t l = 0; l < flops.size(); ++l) {
    const double f = flops[l] / seconds[l], b = bytes[l] / seconds[l];
    ff += f * f;
    fb += f * b;
    bb += b * b;
    f1 += f;
    b1 += b;
  }
  const double det = ff * bb - fb * fb;
  const double a = det > 0 ? (f1 * bb - b1 * fb) / det : 0.0, b = det > 0 ? (ff * b1 - fb * f1) / det : 0.0;
  flops_per_byte = a > 0 && b > 0 ? b / a : 0.0;
  std::vector<double> cost(flops.size());
  for (size_t l = 0; l < flops.size(); ++l) cost[l] = flops[l] + flops_per_byte * bytes[l];
  return cost;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Per-layer FLOP share of the partitioner's estimate against the share of measured F + I + W time");
  std::string config_path;
  int64_t rows = 8;
  int rounds = 7;
  app.add_option("config", config_path, "Training config (its model)")->required()->check(CLI::ExistingFile);
  app.add_option("--rows", rows, "Samples per timed micro-batch")->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "Rounds; the table takes medians")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  const sluice::config::Config cfg = sluice::config::parse_config(config_path);
  sluice::kernels::set_blas_thread_count(1);
  sluice::kernels::Backend& backend = sluice::kernels::cpu_backend();
  std::vector<std::unique_ptr<sluice::model::Layer>> layers = sluice::model::build_layers(cfg.model, backend);
  sluice::model::init_layers(layers, 1);
  const std::vector<double> estimate =
      sluice::model::partition_costs(sluice::model::model_shape(cfg.model, {}), cfg.pipeline).layers;

  std::mt19937 rng(1);
  one_round(layers, backend, rows, rng);  // warm-up: plans, primitive caches, first-touch pages
  std::vector<std::vector<double>> per_piece(layers.size() * 3);
  for (int r = 0; r < rounds; ++r) {
    const RoundTimes times = one_round(layers, backend, rows, rng);
    for (size_t l = 0; l < layers.size(); ++l)
      for (int p = 0; p < 3; ++p) per_piece[l * 3 + p].push_back(times[l][p]);
  }
  std::vector<double> measured(layers.size()), bytes(layers.size());
  double all_time = 0.0, all_estimate = 0.0;
  for (size_t l = 0; l < layers.size(); ++l) {
    for (int p = 0; p < 3; ++p) measured[l] += median(per_piece[l * 3 + p]);
    all_time += measured[l];
    all_estimate += estimate[l];
    bytes[l] = 3.0 * 4.0 * static_cast<double>(layers[l]->in_features() + layers[l]->out_features());
  }
  double flops_per_byte = 0.0;
  const std::vector<double> roofline = with_bytes_term(estimate, bytes, measured, flops_per_byte);
  double all_roofline = 0.0;
  for (double cost : roofline) all_roofline += cost;
  std::printf("%s: %zu layers, %lld rows, %d rounds (medians), 1 thread; F+I+W %.3f ms per round\n",
              config_path.c_str(), layers.size(), static_cast<long long>(rows), rounds, 1e3 * all_time);
  std::printf("%-6s %-14s %10s %10s %8s %10s %12s\n", "layer", "type", "FLOP share", "time share", "ratio", "F+I+W ms",
              "+bytes ratio");
  for (size_t l = 0; l < layers.size(); ++l) {
    const double flop_share = estimate[l] / all_estimate, time_share = measured[l] / all_time;
    const double roofline_ratio = roofline[l] / all_roofline / time_share;
    std::printf("%-6zu %-14s %9.2f%% %9.2f%% %8.3f %10.3f %12.3f%s\n", l, layers[l]->type().c_str(),
                100.0 * flop_share, 100.0 * time_share, flop_share / time_share, 1e3 * measured[l], roofline_ratio,
                std::abs(flop_share / time_share - 1.0) > 0.2 ? "  FLOP share off by more than 20%" : "");
  }
  std::printf("what-if: time fits a x FLOPs + b x bytes with b / a = %.1f FLOP-equivalents per byte moved "
              "(+bytes ratio: the share under FLOPs + (b / a) x bytes over the time share)\n",
              flops_per_byte);
  return 0;
}
