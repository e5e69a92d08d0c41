// The samples a solver handed in with sluice_submit_samples, held on the ranks that train on them: inputs on the
// ranks of the first pipeline stage, targets on the ranks of the last stage (one rank may hold both; a rank of a
// middle stage holds neither, only the count). Every rank of every replica keeps the same count, order and draw
// counter, so every rank computes the same batch without talking to the others.
//
// Samples are numbered by age: 0 is the oldest held. Two policies (config data.replay):
//   - no replay buffer (capacity 0): a FIFO. A batch is the `batch` oldest samples, which the step then consumes:
//     every submitted sample is trained on exactly once, in submission order.
//   - a replay buffer of `capacity` samples: a ring. When it is full a new sample replaces the oldest. A batch is
//     drawn without replacement: the first `batch` entries of a permutation of [0, held) shuffled by Fisher-Yates
//     with Philox numbers keyed by (seed, draw number) (kernels/rng.h, RngPurpose::kReplay). Samples stay held; the
//     draw number advances once per step, so the sequence of batches depends on the seed and on nothing else.
//     (The uniform numbers have 24 bits: with more than 2^24 samples held the picks are coarser than one sample.)
// Local: no communication; one thread at a time.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice::runtime {

// What a store holds, as a checkpoint saves it: `held` samples oldest first (a side this rank does not keep is
// empty) and the replay buffer's draw count.
struct SampleStoreContents {
  int64_t held = 0;
  uint64_t draws = 0;
  std::vector<float> inputs;
  std::vector<float> targets;
};

class SampleStore {
 public:
  // What this rank keeps. `replay_capacity` 0: FIFO, no bound (docs/APPLICATION_LOOP.md).
  void configure(int64_t input_features, int64_t output_features, bool keeps_inputs, bool keeps_targets,
                 int64_t replay_capacity);

  int64_t held() const { return held_; }  // the same on every rank
  uint64_t draws() const { return draws_; }
  bool replay() const { return capacity_ > 0; }
  int64_t capacity() const { return capacity_; }
  bool keeps_inputs() const { return keeps_inputs_; }
  bool keeps_targets() const { return keeps_targets_; }
  int64_t input_features() const { return input_features_; }
  int64_t output_features() const { return output_features_; }

  // Appends `count` samples, oldest first. `inputs` ([count][input_features]) is read only where inputs are kept,
  // `targets` likewise; either may be null elsewhere.
  void append(const float* inputs, const float* targets, int64_t count);

  // The ages of the samples of the next batch of `batch` (<= held()), in batch order; see the policies above.
  std::vector<int64_t> next_batch(int64_t batch, uint64_t seed) const;

  // Copies the samples at ages[first .. first + rows) into inputs/targets (row-major); each is written only where
  // that side is kept, and may be null elsewhere.
  void copy_rows(const std::vector<int64_t>& ages, int64_t first, int64_t rows, float* inputs, float* targets) const;

  // After a step that used next_batch(batch): FIFO forgets the `batch` oldest samples; replay counts the draw.
  void consume(int64_t batch);

  // The held samples, oldest first (empty on a side this rank does not keep): what a checkpoint stores.
  std::vector<float> inputs_in_order() const;
  std::vector<float> targets_in_order() const;
  // Replaces everything held by `held` samples given oldest first (sides not kept are ignored) and the draw count.
  void restore(const std::vector<float>& inputs, const std::vector<float>& targets, int64_t held, uint64_t draws);

 private:
  int64_t slot_of(int64_t age) const { return (head_ + age) % slots_; }
  void grow_to(int64_t slots);  // FIFO only: re-lays the ring out oldest-first in `slots` slots
  void put(int64_t slot, const float* input, const float* target);

  int64_t input_features_ = 0;
  int64_t output_features_ = 0;
  bool keeps_inputs_ = false;
  bool keeps_targets_ = false;
  int64_t capacity_ = 0;  // 0: FIFO
  std::vector<float> inputs_;   // slots_ x input_features_ (when kept)
  std::vector<float> targets_;  // slots_ x output_features_ (when kept)
  int64_t slots_ = 0;
  int64_t head_ = 0;  // slot of the oldest sample
  int64_t held_ = 0;
  uint64_t draws_ = 0;
};

}  // namespace sluice::runtime
