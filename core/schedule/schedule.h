// A pipeline schedule: for every rank, the ordered list of actions it runs. Compute-only schedules come from the
// generators; `lower()` adds the SEND/RECV actions the executor needs.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/action.h"

namespace sluice {
namespace schedule {

// A U-Net skip between pipeline stages: a layer of stage `from` is read by a concat or add of stage `to` (from <
// to). Several skips between the same two stages travel as one message per micro-batch. `lower()` turns the ones
// whose stages sit on different ranks into SEND_SKIP/RECV_SKIP and SEND_SKIP_GRAD/RECV_SKIP_GRAD (action.h);
// text form `<from>><to>`, e.g. `0>5`.
struct SkipEdge {
  int from = 0;
  int to = 0;
};
constexpr bool operator==(const SkipEdge& a, const SkipEdge& b) { return a.from == b.from && a.to == b.to; }

struct Schedule {
  std::string name;
  int ranks = 0;
  int chunks = 1;  // virtual stages per rank
  int microbatches = 0;
  std::vector<int> stage_to_rank;               // size num_stages()
  std::vector<std::vector<Action>> actions;     // per rank, in execution order
  std::vector<SkipEdge> skips;                  // stage pairs a skip crosses; empty for a plain chain

  int num_stages() const { return ranks * chunks; }
  int rank_of(int stage) const { return stage_to_rank[stage]; }
};

// Megatron-style looped placement: stage s lives on rank s % ranks.
std::vector<int> looped_placement(int ranks, int chunks);
// V-shaped placement for 2 chunks: rank r holds stages r and 2*ranks-1-r, so the turn of the V stays on one rank.
std::vector<int> v_placement(int ranks);

std::string to_string(const SkipEdge& skip);  // "0>5"
// Throws sluice::Error(kInvalidArgument) quoting `text` unless it is `<from>><to>`.
SkipEdge parse_skip_edge(const std::string& text);

// Whether the skip's two stages sit on different ranks, so that lowering gives it messages.
bool crosses_ranks(const Schedule& schedule, const SkipEdge& skip);

// True when the schedule contains SEND/RECV actions (i.e. it went through lower()).
bool is_lowered(const Schedule& schedule);

// The schedule with every SEND/RECV removed (the inverse of lower()).
Schedule compute_only(const Schedule& schedule);

}  // namespace schedule
}  // namespace sluice
