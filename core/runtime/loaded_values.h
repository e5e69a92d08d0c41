// The values of a tensor read from a checkpoint, checked before they are used. A file whose checksums were
// recomputed (or that a buggy writer produced) can hold NaN/Inf weights or an Adam second moment below zero: loaded
// silently, the model would predict NaN with status OK, or the optimizer would take the square root of a negative
// number at the next step. So the trainer's resume and the inference model's load refuse them, naming the file and
// the dataset.
#pragma once

#include <cstddef>
#include <string>

namespace sluice::runtime {

// Throws Error(kCheckpoint) "checkpoint 'F', dataset /model/layer_0000/weight: non-finite value (nan) at index 3"
// when a value is NaN or infinite, and, for an AdamW second moment (a dataset named .../exp_avg_sq), when a value is
// negative. `file` is the checkpoint's path as shown in messages.
void check_loaded_values(const std::string& file, const std::string& path, const float* values, size_t count);

}  // namespace sluice::runtime
