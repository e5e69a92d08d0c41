// sluice_submit_samples' collective half: every rank of the trainer's world hands in its own samples (any count,
// 0 allowed), and each rank gets back the part it keeps of the job's samples in ONE global order, rank-major: all
// of world rank 0's samples in the order given, then rank 1's, and so on. The ranks of the first pipeline stage
// (every replica's) receive all inputs, those of the last stage all targets; the other ranks learn only the counts.
//
// Each side travels in two steps over the project's groups (comm::Group): a gather over the world at replica 0's
// first-stage (last-stage) rank, then a broadcast from there over that stage's data-parallel group. The middle
// stages take part in the gathers with their own samples but receive nothing. One call carries at most 2 GiB of
// samples per side (MPI counts are ints): larger calls are refused with kInvalidArgument on every rank.
#pragma once

#include <cstdint>
#include <vector>

#include "core/runtime/trainer.h"

namespace sluice::runtime {

struct RoutedSamples {
  int64_t count = 0;            // samples submitted by all ranks together in this call
  std::vector<float> inputs;    // [count][input_features] where this rank keeps inputs, else empty
  std::vector<float> targets;   // [count][output_features] where this rank keeps targets, else empty
};

// Collective over the trainer's world. Starts with the argument agreement arguments_of(function): a
// negative count, or NULL inputs or targets with count > 0, on any rank fails every rank with kInvalidArgument
// naming that rank. `keeps_inputs` / `keeps_targets` say what this rank keeps.
RoutedSamples route_samples(Trainer& trainer, const char* function, const float* inputs, const float* targets,
                            int64_t count, bool keeps_inputs, bool keeps_targets);

}  // namespace sluice::runtime
