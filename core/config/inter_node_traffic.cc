#include "core/config/inter_node_traffic.h"

#include <set>
#include <string>

#include "core/common/error.h"

namespace sluice::config {

namespace {

// Slice s of an ordered sum of `count` floats over `members` (the same near-equal cut as ordered_sum.cc).
int64_t slice_floats(int64_t count, int members, int s) {
  return count / members + (s < count % members ? 1 : 0);
}

// The world's shape and the order that places it.
struct Placement {
  RankOrder order;
  int stages;
  int replicas;
  int blocks;
  int rank(int stage, int replica, int block) const {
    return rank_at(order, stage, replica, block, stages, replicas, blocks);
  }
};

int64_t pipeline_bytes(const Placement& p, const std::vector<int>& node, const StepTraffic& traffic) {
  int64_t bytes = 0;
  for (int r = 0; r < p.replicas; ++r) {
    for (const StepTraffic::Boundary& b : traffic.boundaries) {
      if (node[p.rank(b.from_stage, r, b.block)] != node[p.rank(b.to_stage, r, b.block)]) bytes += b.bytes;
    }
    for (const StepTraffic::Halo& h : traffic.halos) {
      if (node[p.rank(h.stage, r, h.from_block)] != node[p.rank(h.stage, r, h.to_block)]) bytes += h.bytes;
    }
  }
  return bytes;
}

// Each chunk's ordered sum over the replicas holding it, once per block (every block of a replica holds the same
// gradient after the tile gathers and sums it with its own block's replicas).
int64_t gradient_sum_bytes(const Placement& p, const std::vector<int>& node, const StepTraffic& traffic) {
  int64_t bytes = 0;
  for (int stage = 0; stage < p.stages; ++stage) {
    for (const int64_t count : traffic.gradient_floats[stage]) {
      for (int block = 0; block < p.blocks; ++block) {
        for (int i = 0; i < p.replicas; ++i) {
          for (int j = 0; j < p.replicas; ++j) {
            if (i == j || node[p.rank(stage, i, block)] == node[p.rank(stage, j, block)]) continue;
            // i -> j: j's slice of i's gradients (phase 1), then i's summed slice (phase 2).
            bytes += 4 * (slice_floats(count, p.replicas, j) + slice_floats(count, p.replicas, i));
          }
        }
      }
    }
  }
  return bytes;
}

// The domain groups' tile gathers: each block's bytes to every other block of its stage and replica.
int64_t tile_gather_bytes(const Placement& p, const std::vector<int>& node, const StepTraffic& traffic) {
  int64_t bytes = 0;
  for (int r = 0; r < p.replicas; ++r) {
    for (const StepTraffic::Gather& g : traffic.gathers) {
      for (int other = 0; other < p.blocks; ++other) {
        if (other != g.block && node[p.rank(g.stage, r, g.block)] != node[p.rank(g.stage, r, other)]) bytes += g.bytes;
      }
    }
  }
  return bytes;
}

void check_blocks(const StepTraffic& traffic) {
  bool fits = traffic.blocks >= 1;
  for (const StepTraffic::Boundary& b : traffic.boundaries) fits = fits && b.block >= 0 && b.block < traffic.blocks;
  for (const StepTraffic::Halo& h : traffic.halos) {
    fits = fits && h.from_block >= 0 && h.from_block < traffic.blocks && h.to_block >= 0 && h.to_block < traffic.blocks;
  }
  for (const StepTraffic::Gather& g : traffic.gathers) fits = fits && g.block >= 0 && g.block < traffic.blocks;
  if (!fits) {
    throw Error(ErrorCode::kInvalidArgument,
                "inter_node_bytes: a boundary, halo or tile gather names a block outside the " +
                    std::to_string(traffic.blocks) + " blocks");
  }
}

}  // namespace

int64_t inter_node_bytes(RankOrder order, const std::vector<int>& node_of_rank, int stages,
                         const StepTraffic& traffic) {
  if (order == RankOrder::kAuto) throw Error(ErrorCode::kInvalidArgument, "inter_node_bytes: resolve auto first");
  check_blocks(traffic);
  const int world = static_cast<int>(node_of_rank.size());
  const int64_t group = static_cast<int64_t>(stages) * traffic.blocks;
  if (stages < 1 || world % group != 0 || static_cast<int>(traffic.gradient_floats.size()) != stages) {
    throw Error(ErrorCode::kInvalidArgument,
                "inter_node_bytes: " + std::to_string(world) + " ranks, " + std::to_string(stages) + " stages, " +
                    std::to_string(traffic.blocks) + " blocks and " + std::to_string(traffic.gradient_floats.size()) +
                    " per-stage gradient lists do not fit");
  }
  const Placement placement{order, stages, static_cast<int>(world / group), traffic.blocks};
  return pipeline_bytes(placement, node_of_rank, traffic) + gradient_sum_bytes(placement, node_of_rank, traffic) +
         tile_gather_bytes(placement, node_of_rank, traffic);
}

int64_t RankOrderChoice::bytes_of(RankOrder wanted) const {
  for (const auto& [order, bytes] : compared) {
    if (order == wanted) return bytes;
  }
  return -1;
}

RankOrderChoice choose_rank_order(RankOrder requested, const std::vector<int>& node_of_rank, int stages,
                                  const StepTraffic& traffic, bool blocks_consecutive) {
  RankOrderChoice choice;
  choice.blocks = traffic.blocks;
  // Without a split the last four orders are the first two's layouts: nothing to compare. The first two keep a
  // stage's blocks consecutive.
  const std::vector<RankOrder>& orders = resolved_rank_orders();
  const size_t compared = traffic.blocks > 1 && !blocks_consecutive ? orders.size() : 2;
  RankOrder best = orders.front();
  int64_t best_bytes = -1;
  for (size_t i = 0; i < compared; ++i) {
    const int64_t bytes = inter_node_bytes(orders[i], node_of_rank, stages, traffic);
    choice.compared.emplace_back(orders[i], bytes);
    if (best_bytes < 0 || bytes < best_bytes) {
      best = orders[i];
      best_bytes = bytes;
    }
  }
  if (requested != RankOrder::kAuto && choice.bytes_of(requested) < 0) {  // one of the four, without a split
    choice.compared.emplace_back(requested, inter_node_bytes(requested, node_of_rank, stages, traffic));
  }
  choice.nodes = static_cast<int>(std::set<int>(node_of_rank.begin(), node_of_rank.end()).size());
  choice.node_of_rank = node_of_rank;
  choice.order = requested != RankOrder::kAuto ? requested : best;
  return choice;
}

}  // namespace sluice::config
