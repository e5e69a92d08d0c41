#include "core/config/inter_node_traffic.h"

#include <set>
#include <string>

#include "core/common/error.h"

namespace sluice::config {

namespace {

// Slice s of an ordered sum of `count` floats over `replicas` (the same near-equal cut as ordered_sum.cc).
int64_t slice_floats(int64_t count, int replicas, int s) {
  return count / replicas + (s < count % replicas ? 1 : 0);
}

int64_t pipeline_bytes(RankOrder order, const std::vector<int>& node, int stages, int replicas,
                       const StepTraffic& traffic) {
  int64_t bytes = 0;
  for (int r = 0; r < replicas; ++r) {
    for (const StepTraffic::Boundary& b : traffic.boundaries) {
      const int from = rank_at(order, b.from_stage, r, stages, replicas);
      const int to = rank_at(order, b.to_stage, r, stages, replicas);
      if (node[from] != node[to]) bytes += b.bytes;
    }
  }
  return bytes;
}

int64_t gradient_sum_bytes(RankOrder order, const std::vector<int>& node, int stages, int replicas,
                           const StepTraffic& traffic) {
  int64_t bytes = 0;
  for (int stage = 0; stage < stages; ++stage) {
    for (const int64_t count : traffic.gradient_floats[stage]) {
      for (int i = 0; i < replicas; ++i) {
        for (int j = 0; j < replicas; ++j) {
          if (i == j) continue;
          if (node[rank_at(order, stage, i, stages, replicas)] == node[rank_at(order, stage, j, stages, replicas)])
            continue;
          // i -> j: j's slice of i's gradients (phase 1), then i's summed slice (phase 2).
          bytes += 4 * (slice_floats(count, replicas, j) + slice_floats(count, replicas, i));
        }
      }
    }
  }
  return bytes;
}

}  // namespace

int64_t inter_node_bytes(RankOrder order, const std::vector<int>& node_of_rank, int stages,
                         const StepTraffic& traffic) {
  if (order == RankOrder::kAuto) throw Error(ErrorCode::kInvalidArgument, "inter_node_bytes: resolve auto first");
  const int world = static_cast<int>(node_of_rank.size());
  if (stages < 1 || world % stages != 0 || static_cast<int>(traffic.gradient_floats.size()) != stages) {
    throw Error(ErrorCode::kInvalidArgument,
                "inter_node_bytes: " + std::to_string(world) + " ranks, " + std::to_string(stages) + " stages and " +
                    std::to_string(traffic.gradient_floats.size()) + " per-stage gradient lists do not fit");
  }
  const int replicas = world / stages;
  return pipeline_bytes(order, node_of_rank, stages, replicas, traffic) +
         gradient_sum_bytes(order, node_of_rank, stages, replicas, traffic);
}

RankOrderChoice choose_rank_order(RankOrder requested, const std::vector<int>& node_of_rank, int stages,
                                  const StepTraffic& traffic) {
  RankOrderChoice choice;
  choice.across_nodes_bytes = inter_node_bytes(RankOrder::kStagesAcrossNodes, node_of_rank, stages, traffic);
  choice.within_node_bytes = inter_node_bytes(RankOrder::kStagesWithinNode, node_of_rank, stages, traffic);
  choice.nodes = static_cast<int>(std::set<int>(node_of_rank.begin(), node_of_rank.end()).size());
  choice.node_of_rank = node_of_rank;
  if (requested != RankOrder::kAuto) {
    choice.order = requested;
  } else {
    choice.order = choice.across_nodes_bytes < choice.within_node_bytes ? RankOrder::kStagesAcrossNodes
                                                                        : RankOrder::kStagesWithinNode;
  }
  return choice;
}

}  // namespace sluice::config
