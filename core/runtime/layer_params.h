// One layer's parameters by global layer index, for coupling and diagnostics (sluice_get_layer_params /
// sluice_set_layer_params). The values are the layer's parameters in Layer::parameters() order, each tensor
// row-major, concatenated: for a linear layer weight [out][in] then bias [out]; the checkpoint names them
// (/model/layer_NNNN/<name>, whose datasets HDF5 lists in name order, which may differ).
#pragma once

#include <cstdint>

#include "core/runtime/trainer.h"

namespace sluice::runtime {

// Local (after start): the number of floats of global layer `layer`; kInvalidArgument for an index outside the
// model. The same on every rank (it comes from the config).
int64_t layer_param_count(const Trainer& trainer, int layer);

// Collective. Every rank receives layer `layer`'s values (`count` must be layer_param_count), sent by the rank of
// data-parallel replica 0 that holds it. Arguments are agreed: a bad layer or count on any rank fails every rank
// with kInvalidArgument.
void get_layer_params(Trainer& trainer, int layer, float* out, int64_t count);

// Collective. Every rank passes the same `count` values (checked across ranks: kInvalidArgument otherwise); every
// replica's rank that holds the layer takes them, so the replicas stay identical. Optimizer state (momentum, Adam
// moments) and pending accumulated gradients are left as they are.
void set_layer_params(Trainer& trainer, int layer, const float* in, int64_t count);

}  // namespace sluice::runtime
