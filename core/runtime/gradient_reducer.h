// Sums each pipeline stage's parameter gradients over the data-parallel replicas of that stage. The trainer
// starts a stage's sum at the stage's last weight-gradient action (so it overlaps the rest of the drain) and
// finishes all sums before the optimizer step; it sees only this interface.
//   ordered: through host memory and MPI, adding the replicas' contributions in rank order: bit-identical to the
//            sequential run (the CPU's exactness promise), at the cost of device <-> host copies on a GPU;
//   nccl:    ncclAllReduce on device memory (GPU builds, a GPU per rank): no host copies and it overlaps compute,
//            but the order of the additions is NCCL's (agreement with the sequential run is to rounding).
#pragma once

#include <vector>

#include "core/model/layer.h"

namespace sluice::runtime {

class GradientReducer {
 public:
  virtual ~GradientReducer() = default;
  // "ordered" | "nccl", for the layout print.
  virtual const char* name() const = 0;
  // Starts summing `parameters`' gradients for `stage`. Every replica of the stage starts its stages' sums in
  // the same order (they run the same action list); nothing may write the gradients until finish().
  virtual void start(int stage, const std::vector<model::Parameter*>& parameters) = 0;
  // Completes every started sum: each gradient then holds the sum over the replicas (on the backend's device;
  // a device backend may still be completing it on its stream, in order before any later op).
  virtual void finish() = 0;
};

}  // namespace sluice::runtime
