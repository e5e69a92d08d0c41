// Restoring an accumulation window's partial gradient sums from a mid-window checkpoint (/accumulation, written
// per data-parallel replica: /accumulation/layer_NNNN/<param>/replica_R), under the same or another replica count.
//
// Why the replica count may change: a requeued job may land on another number of nodes. The window's gradient is
// the sum, at its end, of every replica's buffer (the data-parallel sum adds them in replica order), and each
// buffer is already divided by the window's global batch, which does not depend on the replica count
// (data.batch is fixed across restarts). So the saved replicas' sums, added in replica order 0, 1, ..., are the
// window's gradient so far: new replica 0 continues from that sum and the other new replicas from zero, and the
// window's final gradient is the same sum of the same terms, only grouped differently -- exact up to float
// summation order. With the same replica count each replica gets its own sum back and the result is bit for bit.
#pragma once

#include <vector>

#include "checkpoint/reader.h"
#include "core/config/config.h"
#include "core/config/layout.h"
#include "core/model/layer.h"
#include "kernels/tensor.h"

namespace sluice::runtime {

// What this rank's replica continues the window with: one host buffer per gradient, same order.
struct StagedAccumulation {
  std::vector<kernels::Tensor*> grads;
  std::vector<std::vector<float>> values;
};

// Local. Reads (and checks the shapes of) the partial sums `params` (this rank's parameters) continue from, for a
// checkpoint saved with `saved_replicas` replicas, loading into `layout`. Throws kCheckpoint naming the file and
// dataset on a missing dataset, a wrong shape or a checksum mismatch. Touches no live tensor.
StagedAccumulation stage_accumulation(const checkpoint::Reader& reader, const std::vector<model::Parameter*>& params,
                                      int saved_replicas, const config::Layout& layout, const config::Config& cfg);

}  // namespace sluice::runtime
