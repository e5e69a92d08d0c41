// The values a checkpoint's /train scalars may take. A checkpoint is input from disk: a crafted or corrupted file
// whose checksum matches must still not resume at step 18446744073709551611 or with a negative replica count. Every
// reader (the Reader itself, so inspect, resume, the inference model and the test oracle alike) refuses a value
// outside its range with an error naming the file, the dataset, the value and the range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sluice::checkpoint {

struct ValueRange {
  int64_t min = 0;
  int64_t max = 0;
};

// Counters no run reaches (2^48 steps is 8900 years at 1 ms a step) but far below where step + 1 or
// step * batch could overflow int64: the bound for step, data_position, optimizer_steps, samples_held and
// samples_draws.
constexpr int64_t kMaxCounter = int64_t{1} << 48;

// The allowed range of /train/<name>; nullopt for names without one: seed (any 64-bit pattern; it is compared with
// the config's) and names this build does not know (it does not use them).
std::optional<ValueRange> train_value_range(const std::string& name);

// Error(kCheckpoint) "checkpoint 'FILE', OBJECT: value V is outside the allowed range [MIN, MAX]" unless
// min <= value <= max.
void require_in_range(int64_t value, const ValueRange& range, const std::string& file, const std::string& object);

}  // namespace sluice::checkpoint
