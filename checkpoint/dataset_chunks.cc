#include "checkpoint/dataset_chunks.h"

#include <algorithm>
#include <cstring>

namespace sluice::checkpoint {

ChunkPlan::ChunkPlan(std::vector<int64_t> dims, size_t element_size, size_t budget_bytes) : dims_(std::move(dims)) {
  if (dims_.empty()) {
    chunks_.push_back({0, 1});
    return;
  }
  for (int64_t dim : dims_) {
    if (dim <= 0) return;  // no values, nothing to move
  }
  // The outermost dimension whose one step (everything after it) fits the budget: a run of steps along it, with
  // the dimensions before it fixed, is both contiguous in memory and a single hyperslab.
  const int64_t budget_elements = std::max<int64_t>(1, static_cast<int64_t>(budget_bytes / element_size));
  split_ = dims_.size() - 1;
  inner_elements_ = 1;
  for (size_t k = dims_.size() - 1; k > 0; --k) {
    if (dims_[k] > budget_elements / inner_elements_) break;  // (division: no overflow)
    inner_elements_ *= dims_[k];
    split_ = k - 1;
  }
  int64_t outer_steps = 1;  // steps along dims_[split_] over all positions of the dimensions before it
  for (size_t k = 0; k <= split_; ++k) outer_steps *= dims_[k];
  const int64_t steps_per_chunk = std::max<int64_t>(1, budget_elements / inner_elements_);
  const int64_t along = dims_[split_];
  for (int64_t step = 0; step < outer_steps;) {
    // A chunk never crosses into the next position of the dimensions before split_: it would not be one hyperslab.
    const int64_t steps = std::min(steps_per_chunk, along - step % along);
    chunks_.push_back({step * inner_elements_, steps * inner_elements_});
    step += steps;
  }
}

Hyperslab ChunkPlan::hyperslab(const DatasetChunk& chunk) const {
  Hyperslab slab;
  if (dims_.empty()) return slab;
  slab.start.assign(dims_.size(), 0);
  slab.count.assign(dims_.begin(), dims_.end());
  int64_t step = chunk.first_element / inner_elements_;
  slab.start[split_] = static_cast<uint64_t>(step % dims_[split_]);
  slab.count[split_] = static_cast<uint64_t>(chunk.elements / inner_elements_);
  step /= dims_[split_];
  for (size_t k = split_; k-- > 0;) {
    slab.start[k] = static_cast<uint64_t>(step % dims_[k]);
    slab.count[k] = 1;
    step /= dims_[k];
  }
  return slab;
}

int64_t box_volume(const Box& box) {
  int64_t volume = 1;
  for (int64_t e : box.extent) volume *= e;
  return volume;
}

bool intersect_boxes(const Box& a, const Box& b, Box& out) {
  Box found;
  for (size_t k = 0; k < a.offset.size(); ++k) {
    const int64_t low = std::max(a.offset[k], b.offset[k]);
    const int64_t high = std::min(a.offset[k] + a.extent[k], b.offset[k] + b.extent[k]);
    if (high <= low) return false;
    found.offset.push_back(low);
    found.extent.push_back(high - low);
  }
  out = std::move(found);
  return true;
}

bool box_contains(const Box& outer, const Box& inner) {
  if (outer.offset.size() != inner.offset.size() || inner.extent.size() != inner.offset.size()) return false;
  for (size_t k = 0; k < outer.offset.size(); ++k) {
    if (inner.offset[k] < outer.offset[k] || inner.extent[k] < 0 ||
        inner.offset[k] + inner.extent[k] > outer.offset[k] + outer.extent[k]) {
      return false;
    }
  }
  return true;
}

namespace {

// Element index of `point` (absolute coordinates) within the row-major values of `box`.
int64_t index_in(const Box& box, const std::vector<int64_t>& point) {
  int64_t index = 0;
  for (size_t k = 0; k < box.offset.size(); ++k) index = index * box.extent[k] + (point[k] - box.offset[k]);
  return index;
}

}  // namespace

void copy_box(const void* from, const Box& from_box, void* to, const Box& to_box, const Box& region,
              size_t element_size) {
  const size_t rank = region.offset.size();
  if (rank == 0) {
    std::memcpy(to, from, element_size);
    return;
  }
  if (box_volume(region) == 0) return;
  // One contiguous run along the last dimension per position of the others, walked like an odometer.
  const size_t run = static_cast<size_t>(region.extent[rank - 1]) * element_size;
  std::vector<int64_t> point(region.offset);
  for (;;) {
    std::memcpy(static_cast<unsigned char*>(to) + static_cast<size_t>(index_in(to_box, point)) * element_size,
                static_cast<const unsigned char*>(from) +
                    static_cast<size_t>(index_in(from_box, point)) * element_size,
                run);
    size_t k = rank - 1;
    for (;;) {
      if (k == 0) return;
      --k;
      if (++point[k] < region.offset[k] + region.extent[k]) break;
      point[k] = region.offset[k];
    }
  }
}

}  // namespace sluice::checkpoint
