// sluice_submit_samples' collective half: every rank of the trainer's world hands in its own samples (any count,
// 0 allowed), and each rank gets back the part it keeps of the job's samples in ONE global order: the order of the
// submitting world ranks (all of world rank 0's samples in the order given, then rank 1's, and so on). The ranks of
// the first pipeline stage (every replica's) receive all inputs, those of the last stage all targets; the other
// ranks learn only the counts.
//
// With a pipeline.domain split (docs/DOMAIN.md) every rank hands in its block of each sample (the widths of
// train_step's: [count][C · Π block]), and the ranks of one replica and pipeline stage (a domain group: one rank per
// block) hand in blocks of the same samples, so they must give the same count (refused otherwise, naming both
// ranks). A domain group counts as one submitter, placed by its lowest world rank; each block travels only among
// the ranks of its block index, so a first- or last-stage rank receives its own block of every sample and the
// stores of all blocks hold the same samples in the same order (they draw the same batches).
//
// Each side travels in three steps over the project's groups (comm::Group), all within one block index: a gather
// over the pipeline (this replica's stages) at the first-stage (last-stage) rank, a gather of those over that
// stage's data-parallel group at replica 0, then a broadcast from there over the same group. The middle stages take
// part in the first gather with their own samples but receive nothing. One call carries at most 2 GiB of samples
// per side and block (MPI counts are ints): larger calls are refused with kInvalidArgument on every rank.
#pragma once

#include <cstdint>
#include <vector>

#include "core/runtime/trainer.h"

namespace sluice::runtime {

struct RoutedSamples {
  int64_t count = 0;            // samples submitted by all ranks together in this call (a split's blocks once)
  std::vector<float> inputs;    // [count][input_features] where this rank keeps inputs, else empty
  std::vector<float> targets;   // [count][output_features] where this rank keeps targets, else empty
};

// Collective over the trainer's world. Starts with the argument agreement arguments_of(function): a
// negative count, or NULL inputs or targets with count > 0, on any rank fails every rank with kInvalidArgument
// naming that rank; so does a domain group whose blocks give different counts. `keeps_inputs` / `keeps_targets`
// say what this rank keeps.
RoutedSamples route_samples(Trainer& trainer, const char* function, const float* inputs, const float* targets,
                            int64_t count, bool keeps_inputs, bool keeps_targets);

}  // namespace sluice::runtime
