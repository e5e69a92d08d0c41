// Which world ranks form a pipeline, a stage's replicas and a stage's domain blocks (config key
// `pipeline.rank_order`).
//
// The world is three dimensions, stages x replicas x blocks (blocks: the pipeline.domain split, 1 without one), and
// an order says how the world ranks run through them: which dimension's index changes from one rank to the next
// (the innermost: its groups are consecutive ranks, which launchers place on one node), which next, which last.
// Their traffic differs: a stage's blocks exchange halos at every layer of every micro-batch, consecutive stages
// send one activation (and its gradient) per boundary and micro-batch, a stage's replicas (and blocks) sum every
// parameter's gradient once per optimizer step. Whichever is heaviest belongs inside a node.
//   stages_within_node:  blocks, then stages, then replicas (a replica's pipeline sits inside a node; the gradient
//                        sums cross the network). Without a split: stage = rank % P, replica = rank / P.
//   stages_across_nodes: blocks, then replicas, then stages (a stage's replicas share a node; only activations
//                        cross). Without a split: replica = rank % DP, stage = rank / DP.
//   The four orders that do not keep a stage's blocks together, named by their dimensions from the innermost
//   (without a split each is one of the two above):
//   stages_blocks_replicas, stages_replicas_blocks, replicas_blocks_stages, replicas_stages_blocks.
//   auto: the order whose inter-node bytes per optimizer step are smallest for this model and node map
//         (core/config/inter_node_traffic.h); ties keep the earlier of this list: stages_within_node,
//         stages_across_nodes, then the four (which only a split can make differ from the first two).
// Checkpoints are keyed by global layer, replica and block index, never by world rank, so a restart may change it.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "core/config/choice_table.h"

namespace sluice::config {

enum class RankOrder {
  kAuto,
  kStagesAcrossNodes,
  kStagesWithinNode,
  kStagesBlocksReplicas,
  kStagesReplicasBlocks,
  kReplicasBlocksStages,
  kReplicasStagesBlocks,
};

inline const ChoiceTable<RankOrder>& rank_order_choices() {
  static const ChoiceTable<RankOrder> table = {{RankOrder::kAuto, "auto"},
                                               {RankOrder::kStagesAcrossNodes, "stages_across_nodes"},
                                               {RankOrder::kStagesWithinNode, "stages_within_node"},
                                               {RankOrder::kStagesBlocksReplicas, "stages_blocks_replicas"},
                                               {RankOrder::kStagesReplicasBlocks, "stages_replicas_blocks"},
                                               {RankOrder::kReplicasBlocksStages, "replicas_blocks_stages"},
                                               {RankOrder::kReplicasStagesBlocks, "replicas_stages_blocks"}};
  return table;
}
inline std::string rank_order_name(RankOrder order) { return rank_order_choices().name_of(order); }

// The resolved orders in auto's tie order.
inline const std::vector<RankOrder>& resolved_rank_orders() {
  static const std::vector<RankOrder> orders = {RankOrder::kStagesWithinNode,     RankOrder::kStagesAcrossNodes,
                                                RankOrder::kStagesBlocksReplicas, RankOrder::kStagesReplicasBlocks,
                                                RankOrder::kReplicasBlocksStages, RankOrder::kReplicasStagesBlocks};
  return orders;
}

enum class RankDim { kBlock, kStage, kReplica };

// A resolved order's dimensions from the innermost (consecutive ranks) to the outermost. kAuto: blocks, stages,
// replicas (stages_within_node's, what checks before the node map is known take).
inline std::array<RankDim, 3> rank_nesting(RankOrder order) {
  using D = RankDim;
  switch (order) {
    case RankOrder::kStagesAcrossNodes: return {D::kBlock, D::kReplica, D::kStage};
    case RankOrder::kStagesBlocksReplicas: return {D::kStage, D::kBlock, D::kReplica};
    case RankOrder::kStagesReplicasBlocks: return {D::kStage, D::kReplica, D::kBlock};
    case RankOrder::kReplicasBlocksStages: return {D::kReplica, D::kBlock, D::kStage};
    case RankOrder::kReplicasStagesBlocks: return {D::kReplica, D::kStage, D::kBlock};
    default: return {D::kBlock, D::kStage, D::kReplica};
  }
}

// "blocks, stages, replicas": the nesting from the innermost, for reports.
inline std::string rank_nesting_text(RankOrder order) {
  std::string text;
  for (const RankDim dim : rank_nesting(order)) {
    if (!text.empty()) text += ", ";
    text += dim == RankDim::kBlock ? "blocks" : dim == RankDim::kStage ? "stages" : "replicas";
  }
  return text;
}

// The pipeline stage, replica and domain block of a world rank under a resolved (not auto) order.
struct RankPlace {
  int stage = 0;
  int replica = 0;
  int block = 0;
};

namespace rank_order_detail {
inline int& index_of(RankPlace& place, RankDim dim) {
  return dim == RankDim::kBlock ? place.block : dim == RankDim::kStage ? place.stage : place.replica;
}
inline int count_of(RankDim dim, int stages, int replicas, int blocks) {
  return dim == RankDim::kBlock ? blocks : dim == RankDim::kStage ? stages : replicas;
}
}  // namespace rank_order_detail

inline RankPlace place_of(RankOrder order, int rank, int stages, int replicas, int blocks) {
  RankPlace place;
  for (const RankDim dim : rank_nesting(order)) {
    const int count = rank_order_detail::count_of(dim, stages, replicas, blocks);
    rank_order_detail::index_of(place, dim) = rank % count;
    rank /= count;
  }
  return place;
}
// The inverse: the world rank of `block` of `stage` of `replica`.
inline int rank_at(RankOrder order, int stage, int replica, int block, int stages, int replicas, int blocks) {
  RankPlace place{stage, replica, block};
  const std::array<RankDim, 3> nesting = rank_nesting(order);
  int rank = 0;
  for (std::size_t i = nesting.size(); i-- > 0;) {
    rank = rank * rank_order_detail::count_of(nesting[i], stages, replicas, blocks) +
           rank_order_detail::index_of(place, nesting[i]);
  }
  return rank;
}

// Without a split (one block).
inline RankPlace place_of(RankOrder order, int rank, int stages, int replicas) {
  return place_of(order, rank, stages, replicas, 1);
}
inline int rank_at(RankOrder order, int stage, int replica, int stages, int replicas) {
  return rank_at(order, stage, replica, 0, stages, replicas, 1);
}

}  // namespace sluice::config
