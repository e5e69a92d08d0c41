// The harness the GPU-vs-CPU training tests share: train a configuration for a few steps and collect every loss and
// this rank's final parameters; and the check that a GPU run matches the CPU run (relative, per tensor) and that a
// second GPU run repeats the first bit for bit, with the one summary line the GPU kit (bench/gpu) greps.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config/config.h"

namespace sluice::testing {

// What one run leaves behind on this rank: every step's loss and the final values of this rank's parameters,
// copied to the host through the run's own backend (device tensors cannot be read directly).
struct RunResult {
  std::vector<double> losses;
  std::map<std::string, std::vector<float>> parameters;  // by qualified name
};

// Collective over MPI_COMM_WORLD: trains `cfg` for `steps` steps of `batch` synthetic samples. `target_points` > 1:
// one-hot targets over the channels at each of that many points (cross_entropy on a field); else regression.
// Runs that differ only in device keys use the same layout, so each rank owns the same stages in every run and
// compares its own parameters without sending them anywhere.
RunResult train_and_collect(const config::Config& cfg, int steps, int64_t batch, int64_t target_points = 1);

// `model` (its "model:" and "loss:" YAML) as two pipeline stages, one per rank, 2 microbatches, plain SGD
// (lr 0.05), synthetic data of `batch` samples, seed 11, 3 steps; on cuda both ranks share the one GPU, so the
// transport is staged (NCCL refuses two ranks on one GPU).
config::Config two_stage_config(const std::string& model, const std::string& device, int64_t batch);

// Trains `model` (two_stage_config, 3 steps of 8 samples) on the CPU, then twice on the GPU. Expects every loss
// and every parameter tensor (relative_max_error) within `tolerance` of the CPU's and the two GPU runs identical;
// prints "<tag> rank R, <label>: ..." with the worst differences.
void expect_two_stage_gpu_matches_cpu(const std::string& tag, const std::string& label, const std::string& model,
                                      double tolerance, int64_t target_points = 1);

}  // namespace sluice::testing
