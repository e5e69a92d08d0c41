#include "core/comm/bell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace sluice::comm {
namespace {

// Shared (not FUTEX_PRIVATE_FLAG) futexes: the word lives in memory that other processes map.
long futex(std::atomic<uint32_t>& word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op, value, timeout, nullptr, 0);
}

}  // namespace

void ring_bell(BellWord& bell) {
  bell.rings.fetch_add(1, std::memory_order_seq_cst);
  if (bell.sleepers.load(std::memory_order_seq_cst) != 0) futex(bell.rings, FUTEX_WAKE, INT_MAX, nullptr);
}

bool sleep_on_bell(BellWord& bell, uint32_t seen, std::chrono::microseconds at_most) {
  // The order (sleepers up, then the kernel compares rings with `seen`) pairs with ring_bell's (rings up, then
  // sleepers read): either the ringer sees a sleeper and wakes it, or the kernel sees the new count and returns.
  bell.sleepers.fetch_add(1, std::memory_order_seq_cst);
  const long micros = at_most.count() > 0 ? static_cast<long>(at_most.count()) : 0;
  const timespec timeout{micros / 1000000, (micros % 1000000) * 1000};
  futex(bell.rings, FUTEX_WAIT, seen, &timeout);
  bell.sleepers.fetch_sub(1, std::memory_order_seq_cst);
  return bell.rings.load(std::memory_order_seq_cst) != seen;
}

}  // namespace sluice::comm
