// The store behind sluice_submit_samples (core/runtime/sample_store.h): FIFO order and consumption, the replay
// buffer's ring (the newest replaces the oldest), its draws (distinct samples, a function of seed and draw number
// only), which sides a rank keeps, and the oldest-first contents a checkpoint stores and restores.
#include "core/runtime/sample_store.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace sluice::runtime {
namespace {

// Sample i has input {i, i + 0.5} and target {-i}: a row tells which sample it is.
void append_samples(SampleStore& store, int first, int count) {
  std::vector<float> inputs, targets;
  for (int i = first; i < first + count; ++i) {
    inputs.insert(inputs.end(), {static_cast<float>(i), i + 0.5f});
    targets.push_back(static_cast<float>(-i));
  }
  store.append(inputs.data(), targets.data(), count);
}

SampleStore store_of(int64_t capacity, bool inputs = true, bool targets = true) {
  SampleStore store;
  store.configure(2, 1, inputs, targets, capacity);
  return store;
}

// The sample numbers of a batch, read from the rows copy_rows gives.
std::vector<int> batch_samples(const SampleStore& store, int64_t batch, uint64_t seed) {
  const std::vector<int64_t> ages = store.next_batch(batch, seed);
  std::vector<float> inputs(batch * 2), targets(batch);
  store.copy_rows(ages, 0, batch, inputs.data(), targets.data());
  std::vector<int> samples;
  for (int64_t row = 0; row < batch; ++row) {
    EXPECT_EQ(targets[row], -inputs[2 * row]);
    samples.push_back(static_cast<int>(inputs[2 * row]));
  }
  return samples;
}

TEST(SampleStore, FifoTrainsEverySampleOnceInSubmissionOrder) {
  SampleStore store = store_of(0);
  append_samples(store, 0, 3);
  append_samples(store, 3, 4);
  EXPECT_EQ(store.held(), 7);
  EXPECT_EQ(batch_samples(store, 4, 1), (std::vector<int>{0, 1, 2, 3}));
  store.consume(4);
  append_samples(store, 7, 5);  // grows while the oldest sample is not in slot 0
  EXPECT_EQ(batch_samples(store, 8, 1), (std::vector<int>{4, 5, 6, 7, 8, 9, 10, 11}));
  store.consume(8);
  EXPECT_EQ(store.held(), 0);
  EXPECT_EQ(store.draws(), 0u);
}

TEST(SampleStore, ReplayBufferKeepsTheNewestCapacitySamples) {
  SampleStore store = store_of(5);
  append_samples(store, 0, 4);
  append_samples(store, 4, 4);
  EXPECT_EQ(store.held(), 5);
  const std::vector<float> inputs = store.inputs_in_order();
  ASSERT_EQ(inputs.size(), 10u);
  for (int age = 0; age < 5; ++age) EXPECT_EQ(inputs[2 * age], 3.0f + age);  // 3..7, oldest first
  append_samples(store, 8, 12);  // more than the capacity in one call: the last 5 remain
  EXPECT_EQ(store.targets_in_order(), (std::vector<float>{-15, -16, -17, -18, -19}));
}

TEST(SampleStore, ReplayDrawsDistinctSamplesThatDependOnSeedAndDrawOnly) {
  SampleStore store = store_of(64);
  append_samples(store, 0, 64);
  const std::vector<int> first = batch_samples(store, 16, 7);
  EXPECT_EQ(std::set<int>(first.begin(), first.end()).size(), 16u);  // without replacement
  EXPECT_EQ(batch_samples(store, 16, 7), first);                      // same seed and draw: same batch
  EXPECT_NE(batch_samples(store, 16, 8), first);                      // another seed: another batch
  store.consume(16);
  EXPECT_EQ(store.held(), 64);  // the samples stay
  EXPECT_EQ(store.draws(), 1u);
  EXPECT_NE(batch_samples(store, 16, 7), first);  // the next draw differs
  const std::vector<int> all = batch_samples(store, 64, 7);
  EXPECT_EQ(std::set<int>(all.begin(), all.end()).size(), 64u);  // a whole permutation
}

TEST(SampleStore, RestoreGivesTheSameBatchesAsTheStoreThatWasSaved) {
  SampleStore saved = store_of(6);
  append_samples(saved, 0, 9);  // wrapped: the oldest is not in slot 0
  saved.consume(4);
  SampleStore restored = store_of(6);
  restored.restore(saved.inputs_in_order(), saved.targets_in_order(), saved.held(), saved.draws());
  EXPECT_EQ(restored.draws(), 1u);
  EXPECT_EQ(batch_samples(restored, 6, 3), batch_samples(saved, 6, 3));
  append_samples(saved, 9, 2);
  append_samples(restored, 9, 2);
  EXPECT_EQ(restored.inputs_in_order(), saved.inputs_in_order());
}

TEST(SampleStore, KeepsOnlyTheSidesOfItsStage) {
  SampleStore middle = store_of(0, false, false);
  middle.append(nullptr, nullptr, 3);  // a middle stage counts samples but holds neither side
  EXPECT_EQ(middle.held(), 3);
  EXPECT_TRUE(middle.inputs_in_order().empty());
  SampleStore last = store_of(0, false, true);
  const std::vector<float> targets = {1, 2};
  last.append(nullptr, targets.data(), 2);
  EXPECT_TRUE(last.inputs_in_order().empty());
  EXPECT_EQ(last.targets_in_order(), targets);
}

}  // namespace
}  // namespace sluice::runtime
