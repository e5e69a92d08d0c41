#include "core/config/layout.h"

#include <algorithm>
#include <climits>
#include <string>

#include "core/common/error.h"
#include "core/config/domain_layout.h"

namespace sluice::config {

namespace {

[[noreturn]] void fail(const std::string& problem) { throw Error(ErrorCode::kConfig, "config: " + problem); }

std::string blocks_text(const std::vector<int>& blocks) {
  std::string text = "[";
  for (size_t i = 0; i < blocks.size(); ++i) text += (i ? ", " : "") + std::to_string(blocks[i]);
  return text + "]";
}

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

// Replicas without a domain split: world = replicas x stages.
int replicas_of(const Config& config, int world_size) {
  const int stages = config.pipeline.stages;
  if (world_size % stages != 0) {
    fail("pipeline.stages is " + std::to_string(stages) + " but the MPI world has " + std::to_string(world_size) +
         " ranks, which is not a multiple of it; world sizes that work: " + first_multiples(stages, 4));
  }
  const int data_parallel = world_size / stages;
  if (config.pipeline.data_parallel > 0 && config.pipeline.data_parallel != data_parallel) {
    fail("pipeline.data_parallel is " + std::to_string(config.pipeline.data_parallel) + " and pipeline.stages is " +
         std::to_string(stages) + ", which needs " + std::to_string(static_cast<int64_t>(config.pipeline.data_parallel) * stages) +
         " ranks, but the MPI world has " + std::to_string(world_size) + " (drop data_parallel to derive it as " +
         std::to_string(data_parallel) + ")");
  }
  return data_parallel;
}

// Replicas with a domain split: world = replicas x stages x blocks; the messages give all three counts.
int domain_replicas_of(const Config& config, int world_size) {
  const int64_t stages = config.pipeline.stages;
  const int64_t blocks = domain_block_count(config.pipeline.domain);
  const std::string split = "pipeline.stages " + std::to_string(stages) + " and pipeline.domain " +
                            blocks_text(config.pipeline.domain) + " (" + std::to_string(blocks) + " blocks)";
  // blocks <= world first: stages x blocks then fits in 64 bits
  if (blocks > world_size || world_size % (stages * blocks) != 0) {
    fail("ranks = replicas x stages x blocks, but with " + split + " the MPI world's " + std::to_string(world_size) +
         " ranks are not a multiple of stages x blocks = " + std::to_string(stages * blocks) +
         (stages * blocks <= INT_MAX ? "; world sizes that work: " + first_multiples(stages * blocks, 4)
                                     : std::string("; no MPI world is that large")));
  }
  const int data_parallel = static_cast<int>(world_size / (stages * blocks));
  const int64_t asked = config.pipeline.data_parallel;
  if (asked > 0 && asked != data_parallel) {
    fail("ranks = replicas x stages x blocks: pipeline.data_parallel " + std::to_string(asked) + " with " + split +
         " needs " + std::to_string(asked) + " x " + std::to_string(stages) + " x " + std::to_string(blocks) + " = " +
         std::to_string(asked * stages * blocks) + " ranks, but the MPI world has " + std::to_string(world_size) +
         " (drop data_parallel to derive it as " + std::to_string(data_parallel) + ")");
  }
  return data_parallel;
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
  // The parser ties a device list to pipeline.stages; a Config built or edited in code may not.
  const std::size_t devices = config.devices.size();
  if (devices == 0 || (devices != 1 && devices != static_cast<std::size_t>(stages))) {
    fail("device lists " + std::to_string(devices) + " devices but pipeline.stages is " +
         std::to_string(stages) + ": give one device per stage, or one for all");
  }
  const int64_t block_count = domain_block_count(config.pipeline.domain);
  const int data_parallel =
      block_count == 1 ? replicas_of(config, world_size) : domain_replicas_of(config, world_size);
  const int blocks = static_cast<int>(block_count);  // divides the world size
  check_data_batch(config, data_parallel);
  Layout layout;
  layout.world = world_size;
  layout.stages = stages;
  layout.data_parallel = data_parallel;
  layout.blocks = blocks;
  layout.rank = rank;
  const RankPlace place = place_of(order, rank, stages, data_parallel, blocks);
  layout.block = place.block;
  layout.stage_rank = place.stage;
  layout.replica = place.replica;
  layout.order = order;
  return layout;
}

}  // namespace sluice::config
