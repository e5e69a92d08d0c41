// TimedQueue (ready_queue.h) hands entries out in time order with the times they were pushed at, whatever the
// time step and tie rule; the ring and the heap it falls back to must agree.
#include "core/schedule/ready_queue.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace sluice {
namespace schedule {
namespace {

using detail::Ties;
using detail::TimedQueue;

std::vector<std::pair<double, int>> drain(TimedQueue<int>& queue) {
  std::vector<std::pair<double, int>> out;
  while (!queue.empty()) out.push_back(queue.pop());
  return out;
}

TEST(ReadyQueueTest, TimeStepComesFromTheCosts) {
  EXPECT_EQ(detail::time_step({1, 1, 1}), 1.0);
  EXPECT_EQ(detail::time_step({2, 1, 0.5}), 0.5);
  EXPECT_EQ(detail::time_step({1, 0.25}), 0.25);
  EXPECT_EQ(detail::time_step({1, 0.3}), 0.0);
}

// Push order on a step below 1 (the ring's bucket index is in steps, the time handed out is in time units).
TEST(ReadyQueueTest, PushOrderGivesTimesOnAFractionalStep) {
  TimedQueue<int> queue(0.5, 2.0, Ties::kPushOrder);
  queue.push(0.0, 4);
  queue.push(1.5, 7);
  queue.push(0.5, 3);
  queue.push(0.5, 1);
  const std::vector<std::pair<double, int>> expected = {{0.0, 4}, {0.5, 3}, {0.5, 1}, {1.5, 7}};
  EXPECT_EQ(drain(queue), expected);
}

TEST(ReadyQueueTest, PushOrderGivesTimesOnAStepAboveOne) {
  TimedQueue<int> queue(2.0, 4.0, Ties::kPushOrder);
  queue.push(4.0, 9);
  queue.push(2.0, 5);
  const std::vector<std::pair<double, int>> expected = {{2.0, 5}, {4.0, 9}};
  EXPECT_EQ(drain(queue), expected);
}

// Lowest first on the ring equals the heap it falls back to (a step of 0: none), ties to the lower entry.
TEST(ReadyQueueTest, LowestFirstRingMatchesTheHeap) {
  TimedQueue<int> ring(0.25, 3.0, Ties::kLowestFirst), heap(0.0, 3.0, Ties::kLowestFirst);
  const std::vector<std::pair<double, int>> pushes = {{0.75, 8}, {0.25, 6}, {0.75, 2}, {2.5, 1}, {0.25, 9}};
  for (const auto& [time, item] : pushes) {
    ring.push(time, item);
    heap.push(time, item);
  }
  const std::vector<std::pair<double, int>> expected = {{0.25, 6}, {0.25, 9}, {0.75, 2}, {0.75, 8}, {2.5, 1}};
  EXPECT_EQ(drain(ring), expected);
  EXPECT_EQ(drain(heap), expected);
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
