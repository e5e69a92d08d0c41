#include "checkpoint/value_ranges.h"

#include <map>

#include "checkpoint/format.h"
#include "checkpoint/hdf5_handle.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

// The bits of the largest finite double: non-negative finite doubles are exactly the bit patterns
// 0 .. 0x7FEFFFFFFFFFFFFF (IEEE-754 orders them like integers), so the learning-rate override is range-checked as
// an integer. Negative, infinite and NaN learning rates all fall outside.
constexpr int64_t kLargestFiniteDoubleBits = 0x7FEFFFFFFFFFFFFF;
// Replica counts and positions inside an accumulation window become ints in the trainer.
constexpr int64_t kMaxReplicas = int64_t{1} << 20;
constexpr int64_t kMaxAccumulationPosition = (int64_t{1} << 31) - 2;

const std::map<std::string, ValueRange>& ranges() {
  static const std::map<std::string, ValueRange> table = {
      {kStepDataset, {0, kMaxCounter}},
      {kDataPositionDataset, {0, kMaxCounter}},
      {kDataPositionInSamplesDataset, {0, 1}},
      {kOptimizerStepsDataset, {0, kMaxCounter}},
      {kAccumulationPositionDataset, {0, kMaxAccumulationPosition}},
      {kAccumulationReplicasDataset, {1, kMaxReplicas}},
      {kAccumulationCallSamplesDataset, {1, kMaxCounter}},
      {kSamplesHeldDataset, {0, kMaxCounter}},
      {kSamplesDrawsDataset, {0, kMaxCounter}},
      {kLrOverrideBitsDataset, {0, kLargestFiniteDoubleBits}},
  };
  return table;
}

}  // namespace

std::optional<ValueRange> train_value_range(const std::string& name) {
  const auto found = ranges().find(name);
  if (found == ranges().end()) return std::nullopt;
  return found->second;
}

void require_in_range(int64_t value, const ValueRange& range, const std::string& file, const std::string& object) {
  if (value >= range.min && value <= range.max) return;
  throw Error(ErrorCode::kCheckpoint,
              checkpoint_message(file, object, "value " + std::to_string(value) + " is outside the allowed range [" +
                                                   std::to_string(range.min) + ", " + std::to_string(range.max) +
                                                   "]"));
}

}  // namespace sluice::checkpoint
