// How rank 0 cuts a dataset into pieces when it writes a checkpoint (checkpoint/save.cc): every piece is at most a
// byte budget, a contiguous range of the dataset's row-major values (so its owner sends it straight from the
// Snapshot's memory, without a copy), and one HDF5 hyperslab of the dataset (so rank 0 writes it with one call).
// Pure arithmetic: no HDF5 or MPI here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::checkpoint {

// Elements [first_element, first_element + elements) of the row-major values.
struct DatasetChunk {
  int64_t first_element = 0;
  int64_t elements = 0;
};

// The same piece as a selection in the dataset's dataspace: a start and a count per dimension.
struct Hyperslab {
  std::vector<uint64_t> start;
  std::vector<uint64_t> count;
};

class ChunkPlan {
 public:
  // `dims` empty: a scalar (one chunk of one element). A dataset with a zero dimension has no chunks.
  // `budget_bytes` must be at least `element_size`.
  ChunkPlan(std::vector<int64_t> dims, size_t element_size, size_t budget_bytes);

  // In order, covering every element once; each holds at most budget_bytes.
  const std::vector<DatasetChunk>& chunks() const { return chunks_; }
  // The selection of `chunk` (one of chunks()); for a scalar both vectors are empty.
  Hyperslab hyperslab(const DatasetChunk& chunk) const;

 private:
  std::vector<int64_t> dims_;
  size_t split_ = 0;            // the dimension along which chunks are cut; those after it are taken whole
  int64_t inner_elements_ = 1;  // elements of one step along dims_[split_]
  std::vector<DatasetChunk> chunks_;
};

// A box of a row-major array: where it starts and how far it reaches along each dimension. Rank 0 assembles a
// dataset that several ranks own by blocks (the submitted samples on a pipeline.domain split) slab by slab, taking
// from each owner the part of its block the slab covers.
struct Box {
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
};

int64_t box_volume(const Box& box);
// The part of `a` inside `b` (same rank) in `out`; false, `out` untouched, when they do not overlap.
bool intersect_boxes(const Box& a, const Box& b, Box& out);
// Whether `inner` lies wholly inside `outer` (same rank).
bool box_contains(const Box& outer, const Box& inner);
// Copies the values of `region` from `from` (the row-major values of box `from_box`) into `to` (the row-major
// values of box `to_box`). `region` must lie inside both.
void copy_box(const void* from, const Box& from_box, void* to, const Box& to_box, const Box& region,
              size_t element_size);

}  // namespace sluice::checkpoint
