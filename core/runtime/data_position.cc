#include "core/runtime/data_position.h"

namespace sluice::runtime {

void DataPosition::begin_call(uint64_t step, int accumulate, int window_position, int64_t global_call_batch) {
  const uint64_t call_batch = static_cast<uint64_t>(global_call_batch);
  const uint64_t earlier_calls_of_window = static_cast<uint64_t>(window_position) * call_batch;
  if (!known_) {
    // As versions that counted calls computed it (StepData::first_sample): every call the size of this one.
    samples_ = (step * static_cast<uint64_t>(accumulate) + static_cast<uint64_t>(window_position)) * call_batch;
    known_ = true;
  }
  window_start_ = samples_ >= earlier_calls_of_window ? samples_ - earlier_calls_of_window : 0;
}

}  // namespace sluice::runtime
