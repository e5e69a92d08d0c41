// Where training batches come from. A source is addressed by (step, row of that step's global batch), never
// by "the next batch", so every rank can fetch exactly its own slice and a run restarted at step k sees the
// same data it would have seen without the restart.
#pragma once

#include <cstdint>

namespace sluice::data {

class DataSource {
 public:
  virtual ~DataSource() = default;

  // Fills rows [first_row, first_row + rows) of step `step`'s global batch: `inputs` is row-major
  // [rows][input_features()], `targets` row-major [rows][target_features()].
  virtual void batch(int64_t step, int64_t first_row, int64_t rows, float* inputs, float* targets) = 0;

  virtual int64_t input_features() const = 0;
  virtual int64_t target_features() const = 0;
};

}  // namespace sluice::data
