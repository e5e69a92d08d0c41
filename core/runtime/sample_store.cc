#include "core/runtime/sample_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "kernels/rng.h"

namespace sluice::runtime {
namespace {

void copy_row(const float* from, float* to, int64_t features) {
  if (features > 0) std::memcpy(to, from, static_cast<size_t>(features) * sizeof(float));
}

}  // namespace

void SampleStore::configure(int64_t input_features, int64_t output_features, bool keeps_inputs, bool keeps_targets,
                            int64_t replay_capacity) {
  *this = SampleStore{};
  input_features_ = input_features;
  output_features_ = output_features;
  keeps_inputs_ = keeps_inputs;
  keeps_targets_ = keeps_targets;
  capacity_ = replay_capacity;
}

void SampleStore::grow_to(int64_t slots) {
  std::vector<float> inputs(keeps_inputs_ ? static_cast<size_t>(slots * input_features_) : 0);
  std::vector<float> targets(keeps_targets_ ? static_cast<size_t>(slots * output_features_) : 0);
  for (int64_t age = 0; age < held_; ++age) {
    const int64_t from = slot_of(age);
    if (keeps_inputs_) copy_row(&inputs_[from * input_features_], &inputs[age * input_features_], input_features_);
    if (keeps_targets_) {
      copy_row(&targets_[from * output_features_], &targets[age * output_features_], output_features_);
    }
  }
  inputs_ = std::move(inputs);
  targets_ = std::move(targets);
  slots_ = slots;
  head_ = 0;
}

void SampleStore::put(int64_t slot, const float* input, const float* target) {
  if (keeps_inputs_) copy_row(input, &inputs_[slot * input_features_], input_features_);
  if (keeps_targets_) copy_row(target, &targets_[slot * output_features_], output_features_);
}

void SampleStore::append(const float* inputs, const float* targets, int64_t count) {
  if (count <= 0) return;
  if (capacity_ == 0 && held_ + count > slots_) grow_to(std::max(held_ + count, 2 * slots_));
  if (capacity_ > 0 && slots_ == 0) grow_to(capacity_);
  for (int64_t i = 0; i < count; ++i) {
    const float* input = keeps_inputs_ ? inputs + i * input_features_ : nullptr;
    const float* target = keeps_targets_ ? targets + i * output_features_ : nullptr;
    if (held_ < slots_) {
      put(slot_of(held_), input, target);
      ++held_;
    } else {  // a full replay buffer: the newest sample takes the oldest one's slot
      put(head_, input, target);
      head_ = (head_ + 1) % slots_;
    }
  }
}

std::vector<int64_t> SampleStore::next_batch(int64_t batch, uint64_t seed) const {
  std::vector<int64_t> ages(static_cast<size_t>(held_));
  std::iota(ages.begin(), ages.end(), int64_t{0});
  if (capacity_ > 0) {
    // Partial Fisher-Yates: position k takes a uniformly chosen age among those not yet taken. The numbers are a
    // function of (seed, draw number, k) only, so every rank draws the same batch and a resumed run the same next one.
    const kernels::RngStream stream{seed, 0, static_cast<uint64_t>(kernels::RngPurpose::kReplay), draws_, 0};
    std::vector<float> uniform(static_cast<size_t>(batch));
    kernels::uniform_floats(stream, 0, static_cast<uint64_t>(batch), uniform.data());
    for (int64_t k = 0; k < batch; ++k) {
      const int64_t left = held_ - k;
      const int64_t pick = std::min(left - 1, static_cast<int64_t>(std::floor(double{uniform[k]} * left)));
      std::swap(ages[k], ages[k + pick]);
    }
  }
  ages.resize(static_cast<size_t>(batch));
  return ages;
}

void SampleStore::copy_rows(const std::vector<int64_t>& ages, int64_t first, int64_t rows, float* inputs,
                            float* targets) const {
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t slot = slot_of(ages[first + row]);
    if (keeps_inputs_) copy_row(&inputs_[slot * input_features_], inputs + row * input_features_, input_features_);
    if (keeps_targets_) {
      copy_row(&targets_[slot * output_features_], targets + row * output_features_, output_features_);
    }
  }
}

void SampleStore::consume(int64_t batch) {
  if (capacity_ > 0) {
    ++draws_;
    return;
  }
  head_ = held_ == batch ? 0 : slot_of(batch);
  held_ -= batch;
}

std::vector<float> SampleStore::inputs_in_order() const {
  std::vector<float> out(keeps_inputs_ ? static_cast<size_t>(held_ * input_features_) : 0);
  for (int64_t age = 0; keeps_inputs_ && age < held_; ++age) {
    copy_row(&inputs_[slot_of(age) * input_features_], &out[age * input_features_], input_features_);
  }
  return out;
}

std::vector<float> SampleStore::targets_in_order() const {
  std::vector<float> out(keeps_targets_ ? static_cast<size_t>(held_ * output_features_) : 0);
  for (int64_t age = 0; keeps_targets_ && age < held_; ++age) {
    copy_row(&targets_[slot_of(age) * output_features_], &out[age * output_features_], output_features_);
  }
  return out;
}

void SampleStore::restore(const std::vector<float>& inputs, const std::vector<float>& targets, int64_t held,
                          uint64_t draws) {
  configure(input_features_, output_features_, keeps_inputs_, keeps_targets_, capacity_);
  append(inputs.data(), targets.data(), held);
  draws_ = draws;
}

}  // namespace sluice::runtime
