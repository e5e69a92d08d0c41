#include "core/config/layout.h"

#include <algorithm>
#include <string>

#include "core/common/error.h"

namespace sluice::config {

namespace {

[[noreturn]] void fail(const std::string& problem) { throw Error(ErrorCode::kConfig, "config: " + problem); }

// In 64 bits: with `stages: 2147483647` the multiples of an int do not fit in an int.
std::string first_multiples(int64_t step, int count) {
  std::string listed;
  for (int i = 1; i <= count; ++i) listed += std::to_string(step * i) + ", ";
  return listed + "...";
}

// The valid data.batch values next to `value`: multiples of `replicas` of at least `smallest`.
std::string nearest_batches(int64_t value, int64_t replicas, int64_t smallest) {
  if (value < smallest) return std::to_string(smallest);
  const int64_t below = value / replicas * replicas;
  if (below == value) return std::to_string(value);
  return std::to_string(below) + " or " + std::to_string(below + replicas);
}

// data.batch, when given (it is optional under the C API, where every call passes its own batch): one global batch
// of equal replica batches, each of at least one row per micro-batch. A replica batch need not be a multiple of
// the micro-batches: they then differ by one row (core/runtime/microbatch_rows.h).
void check_data_batch(const Config& config, int data_parallel) {
  const int64_t batch = config.data.batch;
  if (batch == 0) return;  // not configured
  const int64_t smallest = static_cast<int64_t>(data_parallel) * config.pipeline.microbatches;
  if (batch < 0 || batch % data_parallel != 0 || batch < smallest) {
    fail("data.batch " + std::to_string(batch) + " does not split into data_parallel = " +
         std::to_string(data_parallel) + " equal replica batches of at least pipeline.microbatches = " +
         std::to_string(config.pipeline.microbatches) + " rows (one per micro-batch); nearest valid batch sizes: " +
         nearest_batches(std::max<int64_t>(batch, 1), data_parallel, smallest));
  }
}

}  // namespace

Layout make_layout(const Config& config, int world_size, int rank) {
  const RankOrder order = config.pipeline.rank_order;
  return make_layout(config, world_size, rank, order == RankOrder::kAuto ? RankOrder::kStagesWithinNode : order);
}

Layout make_layout(const Config& config, int world_size, int rank, RankOrder order) {
  if (order == RankOrder::kAuto) throw Error(ErrorCode::kInvalidArgument, "make_layout: resolve rank_order auto first");
  if (world_size < 1)
    throw Error(ErrorCode::kInvalidArgument, "make_layout: world size " + std::to_string(world_size) + " < 1");
  if (rank < 0 || rank >= world_size) {
    throw Error(ErrorCode::kInvalidArgument, "make_layout: rank " + std::to_string(rank) + " is outside the world of " +
                                                 std::to_string(world_size) + " ranks");
  }
  const int stages = config.pipeline.stages;
  if (stages < 1) fail("pipeline.stages must be positive, got " + std::to_string(stages));
  if (world_size % stages != 0) {
    fail("pipeline.stages is " + std::to_string(stages) + " but the MPI world has " + std::to_string(world_size) +
         " ranks, which is not a multiple of it; world sizes that work: " + first_multiples(stages, 4));
  }
  // The parser ties a device list to pipeline.stages; a Config built or edited in code may not.
  const std::size_t devices = config.devices.size();
  if (devices == 0 || (devices != 1 && devices != static_cast<std::size_t>(stages))) {
    fail("device lists " + std::to_string(devices) + " devices but pipeline.stages is " +
         std::to_string(stages) + ": give one device per stage, or one for all");
  }
  const int data_parallel = world_size / stages;
  if (config.pipeline.data_parallel > 0 && config.pipeline.data_parallel != data_parallel) {
    fail("pipeline.data_parallel is " + std::to_string(config.pipeline.data_parallel) + " and pipeline.stages is " +
         std::to_string(stages) + ", which needs " + std::to_string(static_cast<int64_t>(config.pipeline.data_parallel) * stages) +
         " ranks, but the MPI world has " + std::to_string(world_size) + " (drop data_parallel to derive it as " +
         std::to_string(data_parallel) + ")");
  }
  check_data_batch(config, data_parallel);
  Layout layout;
  layout.world = world_size;
  layout.stages = stages;
  layout.data_parallel = data_parallel;
  layout.rank = rank;
  const RankPlace place = place_of(order, rank, stages, data_parallel);
  layout.stage_rank = place.stage;
  layout.replica = place.replica;
  layout.order = order;
  return layout;
}

}  // namespace sluice::config
