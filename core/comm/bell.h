// A doorbell: a counter in memory shared by the ranks of one node, which a rank that waits for a message sleeps on
// (a futex) and a peer that has just sent it rings. Why: a rank that waits long and often (the lightly loaded
// stage of an unequal pipeline) should give its core to the solver, but every sleep without a bell ends at a timer
// (`block`'s and `adaptive`'s slices, up to a millisecond), so each answer of that rank comes late by up to a
// slice. With a bell the kernel wakes the sleeper as soon as the peer rings, as a socket wakes a gloo rank.
//
// A bell is a hint, never a condition: a ring may come for another message, or never come (a peer on another
// node, a collective progressed inside MPI, a node without shared memory); every sleep is therefore bounded by
// the caller's slice and followed by a poll, and a missing bell degrades to the timer-ended sleeps.
// Plain C++ and Linux futexes, no MPI (doorbells.h sets bells up over a communicator).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sluice::comm {

// One rank's bell, in shared memory: how often it was rung, and how many of its threads sleep on it now (a ring
// makes the wake-up system call only when someone sleeps). One cache line, so that two ranks' bells never share
// one.
struct alignas(64) BellWord {
  std::atomic<uint32_t> rings{0};
  std::atomic<uint32_t> sleepers{0};
};
static_assert(sizeof(BellWord) == 64, "one bell per cache line");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "a bell is shared between processes: lock-free only");

// Rings `bell`: counts the ring and wakes every thread sleeping on it.
void ring_bell(BellWord& bell);

// Sleeps until `bell` has been rung past `seen` (its `rings` read before the caller's last poll, so that a ring
// between that poll and this sleep is not lost) or `at_most` has passed. Returns whether it was rung.
bool sleep_on_bell(BellWord& bell, uint32_t seen, std::chrono::microseconds at_most);

}  // namespace sluice::comm
