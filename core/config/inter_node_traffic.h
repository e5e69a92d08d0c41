// Bytes per optimizer step that each rank order puts on links between nodes, and auto's choice from them.
// Pure arithmetic over a node map and per-stage traffic figures; the runtime gathers the node map
// (core/runtime/node_ranks.h) and derives the figures from the model and schedule (core/runtime/rank_order_choice.h).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/config/rank_order.h"

namespace sluice::config {

// One replica's point-to-point traffic over an optimizer step plus every stage's gradient sum.
struct StepTraffic {
  struct Boundary {
    int from_stage = 0;     // pipeline stage (rank within the replica) sending the activation
    int to_stage = 0;       // the one receiving it; the gradient travels back on the same pair
    int64_t bytes = 0;      // activations + their gradients per replica per optimizer step
    int block = 0;          // with a split: the block both ends hold (block i of a stage sends to block i)
  };
  std::vector<Boundary> boundaries;  // one per model-chunk boundary that crosses pipeline ranks (and per block)
  // With a split: the halos a stage's blocks exchange, summed over its layers (core/config/domain_layout.h).
  struct Halo {
    int stage = 0;
    int from_block = 0;
    int to_block = 0;
    int64_t bytes = 0;      // forward and backward per replica per optimizer step
  };
  std::vector<Halo> halos;
  // Per pipeline stage: the floats of each model chunk it holds. Each chunk is one ordered gradient sum
  // (core/comm/ordered_sum.cc): cut into `replicas` near-equal slices, every replica sends each other replica
  // that one's slice (reduce-scatter), then its own summed slice to every other replica (all-gather). With a split
  // every block runs that sum over the replicas holding the same block (MpiContext's data-parallel group: equal
  // stage and block); the blocks of one replica agree on the gradient beforehand through the tile gathers below.
  std::vector<std::vector<int64_t>> gradient_floats;
  // With a split: the tile gathers of a stage's domain group (core/comm/tile_gather.h, the blocks of one stage and
  // replica): every block sends its held tiles' values to each other block of the group (the parameter gradients'
  // tile partials, norm statistics, the field loss). `bytes` is what `block` of `stage` sends to EACH other block
  // per replica per optimizer step.
  struct Gather {
    int stage = 0;
    int block = 0;
    int64_t bytes = 0;
  };
  std::vector<Gather> gathers;
  // Domain blocks per sample (pipeline.domain; 1: not split); the world is stages x replicas x blocks and the order
  // places all three (rank_order.h: rank_at with a block).
  int blocks = 1;
};

// Bytes per optimizer step on links between distinct nodes. `node_of_rank[r]` is world rank r's node; its size
// must be stages * replicas * traffic.blocks. Throws Error(kInvalidArgument) for an auto order, mismatched sizes
// or a block outside 0 .. blocks-1.
int64_t inter_node_bytes(RankOrder order, const std::vector<int>& node_of_rank, int stages,
                         const StepTraffic& traffic);

struct RankOrderChoice {
  RankOrder order = RankOrder::kStagesWithinNode;  // resolved: never kAuto
  // What each compared order would put between nodes per optimizer step, in auto's tie order
  // (resolved_rank_orders()): with a split all six, without one stages_within_node and stages_across_nodes (the
  // other four are then the same layouts).
  std::vector<std::pair<RankOrder, int64_t>> compared;
  int blocks = 1;  // the traffic's domain blocks
  int nodes = 1;
  std::vector<int> node_of_rank;  // the node map it was chosen on (world rank -> node 0, 1, ...), for reports

  // `order`'s bytes among `compared`; -1 when it was not compared.
  int64_t bytes_of(RankOrder order) const;
};

// `requested` kept unless it is auto; auto takes the smallest byte count (ties: the earlier in auto's tie order,
// rank_order.h). `blocks_consecutive`: auto compares only the two orders that keep a stage's blocks on consecutive
// ranks (block = rank % blocks), the rule a host declaring its blocks (sluice_trainer_set_domain) relies on before
// start, when it cannot know the order auto would pick.
RankOrderChoice choose_rank_order(RankOrder requested, const std::vector<int>& node_of_rank, int stages,
                                  const StepTraffic& traffic, bool blocks_consecutive = false);

}  // namespace sluice::config
