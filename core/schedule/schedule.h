// A pipeline schedule: for every rank, the ordered list of actions it runs. Compute-only schedules come from the
// generators; `lower()` adds the SEND/RECV actions the executor needs.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/action.h"

namespace sluice {
namespace schedule {

struct Schedule {
  std::string name;
  int ranks = 0;
  int chunks = 1;  // virtual stages per rank
  int microbatches = 0;
  std::vector<int> stage_to_rank;               // size num_stages()
  std::vector<std::vector<Action>> actions;     // per rank, in execution order

  int num_stages() const { return ranks * chunks; }
  int rank_of(int stage) const { return stage_to_rank[stage]; }
};

// Megatron-style looped placement: stage s lives on rank s % ranks.
std::vector<int> looped_placement(int ranks, int chunks);
// V-shaped placement for 2 chunks: rank r holds stages r and 2*ranks-1-r, so the turn of the V stays on one rank.
std::vector<int> v_placement(int ranks);

// True when the schedule contains SEND/RECV actions (i.e. it went through lower()).
bool is_lowered(const Schedule& schedule);

// The schedule with every SEND/RECV removed (the inverse of lower()).
Schedule compute_only(const Schedule& schedule);

}  // namespace schedule
}  // namespace sluice
