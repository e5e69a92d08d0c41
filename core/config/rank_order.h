// Which world ranks form a pipeline and which a stage's replicas (config key `pipeline.rank_order`).
//
// Pipeline parallelism sends one activation (and its gradient) per stage boundary and micro-batch; data
// parallelism sums every parameter's gradient every optimizer step. For most models the second is far larger, so
// the rule that makes pipelines worth running across nodes is: stages span nodes, a stage's replicas share one.
//   stages_within_node: a replica's stages are consecutive ranks (stage = rank % P, replica = rank / P).
//                       Launchers place consecutive ranks on one node, so a whole pipeline sits inside a node
//                       and the gradient sums cross the network.
//   stages_across_nodes: a stage's replicas are consecutive ranks (replica = rank % DP, stage = rank / DP), so
//                       replicas share a node and only activations cross it.
//   auto:               the order whose inter-node bytes per optimizer step are smallest for this model and node
//                       map (core/config/inter_node_traffic.h); ties keep stages_within_node.
// Checkpoints are keyed by global layer and replica index, never by world rank, so a restart may change it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sluice::config {

enum class RankOrder { kAuto, kStagesAcrossNodes, kStagesWithinNode };

// Indexed by RankOrder, in the order error messages list them.
inline const std::vector<std::string>& rank_order_names() {
  static const std::vector<std::string> names = {"auto", "stages_across_nodes", "stages_within_node"};
  return names;
}
inline const std::string& rank_order_name(RankOrder order) {
  return rank_order_names().at(static_cast<std::size_t>(order));
}

// The pipeline stage and the replica of world rank `rank` under a resolved (not auto) order.
struct RankPlace {
  int stage = 0;
  int replica = 0;
};
inline RankPlace place_of(RankOrder order, int rank, int stages, int replicas) {
  if (order == RankOrder::kStagesAcrossNodes) return {rank / replicas, rank % replicas};
  return {rank % stages, rank / stages};
}
// The inverse: the world rank that holds `stage` of `replica`.
inline int rank_at(RankOrder order, int stage, int replica, int stages, int replicas) {
  if (order == RankOrder::kStagesAcrossNodes) return stage * replicas + replica;
  return replica * stages + stage;
}

// With a domain split (pipeline.domain, core/config/layout.h) a stage's blocks are consecutive world ranks and the
// order places their groups: the world rank of `block` of `stage` of `replica`.
inline int rank_at(RankOrder order, int stage, int replica, int block, int stages, int replicas, int blocks) {
  return rank_at(order, stage, replica, stages, replicas) * blocks + block;
}

}  // namespace sluice::config
