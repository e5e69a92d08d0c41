// Internal: the layout of the engine's flat tables indexed by (row, micro-batch), where a row is a stage (or a
// stage and a direction or kind). Entries sit in blocks of 8 micro-batches per row, with all rows of one block side
// by side. A micro-batch travels through neighbouring stages at about the same time, so the entries the ranks touch
// together share a few pages; one row per stage spreads them over thousands of pages, and at p = 512 the page-table
// misses dominated the runs (first seen in the dependency run, which keeps its own copy of this layout).
#pragma once

#include <cstddef>

namespace sluice {
namespace schedule {
namespace detail {

constexpr int kMicrobatchBlockShift = 3;

inline size_t blocked_table_size(size_t rows, int microbatches) {
  const size_t blocks = (static_cast<size_t>(microbatches) + (size_t{1} << kMicrobatchBlockShift) - 1) >>
                        kMicrobatchBlockShift;
  return (blocks * rows) << kMicrobatchBlockShift;
}

inline size_t blocked_index(size_t row, size_t rows, int microbatch) {
  const size_t line = static_cast<size_t>(microbatch >> kMicrobatchBlockShift) * rows + row;
  return (line << kMicrobatchBlockShift) + static_cast<size_t>(microbatch & ((1 << kMicrobatchBlockShift) - 1));
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
