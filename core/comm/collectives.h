// Reductions the trainer needs across ranks: data-parallel gradient sums, the global gradient norm, the
// step loss. All of them are *ordered* sums (each element added over ranks 0, 1, ..., size-1, in that order)
// rather than MPI_Allreduce, whose summation order MPI leaves unspecified: Sluice promises parameters
// bit-identical to a sequential run, which needs one fixed order of floating-point additions whatever the
// process count. How the values travel is the implementation's: over MPI (core/comm/ordered_sum.cc) the float
// gradient sum exchanges slices (MPI_Ialltoallv; each rank adds the slice it owns in rank order) and then
// all-gathers the summed slices, while the sums of a few doubles gather everything and add. (A gradient sum by
// NCCL, pipeline.gradient_sum nccl, bypasses this interface and adds in NCCL's order.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/transport.h"

namespace sluice::comm {

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Starts an ordered sum of `data` (count floats) over the group; when the returned request completes,
  // `data` holds sum over ranks 0..size-1, added in that order, on every rank.
  virtual std::unique_ptr<Request> start_ordered_sum(float* data, int64_t count) = 0;
  // Blocking ordered sums of a few doubles (norms, losses).
  virtual void ordered_sum(double* data, int64_t count) = 0;
  // Gathers `count` doubles from every rank to every rank: out[r * count + i].
  virtual std::vector<double> all_gather(const double* data, int64_t count) = 0;
  // Gathers one text of any length from every rank at `root`, in rank order; other ranks get an empty vector.
  virtual std::vector<std::string> gather_text(const std::string& mine, int root) = 0;
  // Broadcasts `count` floats (any count) from `root` to every rank.
  virtual void broadcast(float* data, int64_t count, int root) = 0;
  // Logical OR of a flag over the group (used to agree on preemption; failures use comm::agree).
  virtual bool any(bool flag) = 0;
  virtual void barrier() = 0;
};

}  // namespace sluice::comm
