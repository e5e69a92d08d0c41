// Where each live tensor of a model goes in a checkpoint: parameters under /model and optimizer state under
// /optimizer, keyed by global layer (checkpoint/layer_paths.h). Shared by the trainer's checkpoints
// (trainer_checkpoint.h) and the test oracle's loader (reference_checkpoint.h), so both read the same layout.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/reader.h"
#include "core/config/config.h"
#include "core/model/layer.h"
#include "core/model/optimizer.h"
#include "kernels/tensor.h"

namespace sluice::runtime {

// A live tensor together with the dataset that stores it and the dataset's shape: the parameter's PyTorch shape
// (model::Parameter::stored_shape, format_version 3), also for its optimizer state and accumulated gradient.
struct Slot {
  std::string path;
  kernels::Tensor* tensor;
  std::vector<int64_t> dims;
};

// Whether a dataset of shape `found` can be read into the slot: the slot's dims (format_version 3), or the tensor's
// 2-D [rows, cols] as versions 1 and 2 wrote every tensor. Both hold the same elements in the same order.
bool fits_slot(const std::vector<int64_t>& found, const std::vector<int64_t>& dims, const kernels::Tensor& tensor);

// The slots of `params` and of the optimizer state that belongs to them.
std::vector<Slot> slots_of(const std::vector<model::Parameter*>& params, model::Optimizer& optimizer);

// The partial gradient sums of `params` held by data-parallel replica `replica` in the middle of an accumulation
// window: /accumulation/layer_NNNN/<param>/replica_<replica>, pointing at each parameter's grad.
std::vector<Slot> accumulation_slots_of(const std::vector<model::Parameter*>& params, int replica);

// Checks that `reader` holds every slot with the right shape and the right kind of optimizer state
// (kCheckpoint naming file and dataset otherwise).
void check_compatible(const checkpoint::Reader& reader, const std::vector<Slot>& slots, const config::Config& cfg);

}  // namespace sluice::runtime
