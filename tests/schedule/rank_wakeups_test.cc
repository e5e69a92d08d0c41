// RankWakeups (rank_wakeups.h): the ring of rank bitsets must hand out exactly what its heap form does (the
// rendezvous play's results follow the order), live wake-ups only, by (time, rank).
#include "core/schedule/rank_wakeups.h"

#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

namespace sluice {
namespace schedule {
namespace {

using detail::RankWakeups;
using Popped = std::vector<std::pair<double, int>>;

// Pops everything, pushing a few random wake-ups (at most `max_delay` ahead, on steps of `step`) after each pop.
Popped play(RankWakeups& wakeups, int ranks, double step, double max_delay, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> rank_of(0, ranks - 1), delay_of(0, static_cast<int>(max_delay / step)),
      pushes_of(0, 2);
  for (int rank = 0; rank < ranks; ++rank) wakeups.push(0.0, rank);
  Popped popped;
  double time = 0.0;
  int rank = 0;
  while (wakeups.pop(time, rank) && popped.size() < 20000) {
    popped.push_back({time, rank});
    for (int n = pushes_of(random); n > 0; --n) wakeups.push(time + delay_of(random) * step, rank_of(random));
  }
  return popped;
}

TEST(RankWakeupsTest, RingMatchesTheHeap) {
  for (int ranks : {1, 5, 64, 130}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      RankWakeups ring(ranks, 0.5, 2.0), heap(ranks, 0.0, 2.0);
      const Popped from_ring = play(ring, ranks, 0.5, 2.0, seed), from_heap = play(heap, ranks, 0.5, 2.0, seed);
      EXPECT_EQ(from_ring, from_heap) << ranks << " ranks, seed " << seed;
      EXPECT_GE(from_ring.size(), static_cast<size_t>(ranks));
    }
  }
}

TEST(RankWakeupsTest, ALaterPushReplacesTheEarlierOne) {
  for (double step : {0.5, 0.0}) {
    RankWakeups wakeups(4, step, 4.0);
    wakeups.push(1.0, 3);
    wakeups.push(0.5, 2);
    wakeups.push(2.0, 3);  // replaces 3's wake-up at 1.0
    wakeups.push(0.5, 1);
    Popped popped;
    double time = 0.0;
    int rank = 0;
    while (wakeups.pop(time, rank)) popped.push_back({time, rank});
    const Popped expected = {{0.5, 1}, {0.5, 2}, {2.0, 3}};
    EXPECT_EQ(popped, expected) << "step " << step;
  }
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
