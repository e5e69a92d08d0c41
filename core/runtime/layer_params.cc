#include "core/runtime/layer_params.h"

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/common/non_finite.h"
#include "core/model/model_shape.h"

namespace sluice::runtime {
namespace {

// This rank's parameters of global layer `layer`, in the layer's parameters() order (empty if it does not hold it).
std::vector<model::Parameter*> local_layer(const Trainer& trainer, int layer) {
  std::vector<model::Parameter*> mine;
  for (const auto& [index, stage] : trainer.parts().stages) {
    if (layer < stage->first_layer() || layer >= stage->last_layer()) continue;
    for (model::Parameter* p : stage->parameters()) {
      if (p->layer_index == layer) mine.push_back(p);
    }
  }
  return mine;
}

bool holds(const Trainer& trainer, int layer) {
  for (const auto& [index, stage] : trainer.parts().stages) {
    if (layer >= stage->first_layer() && layer < stage->last_layer()) return true;
  }
  return false;
}

// The argument agreement every call starts with: each rank checks its own layer, count and pointer, and the values
// it hands in (`incoming`: sluice_set_layer_params) are finite: a NaN weight would only surface as NaN predictions.
void agree_on_arguments(Trainer& trainer, const char* function, int layer, const void* data, int64_t count,
                        bool incoming) {
  std::exception_ptr error;
  try {
    const int64_t expected = layer_param_count(trainer, layer);
    if (count != expected) {
      throw Error(ErrorCode::kInvalidArgument, std::string(function) + ": layer " + std::to_string(layer) + " has " +
                                                   std::to_string(expected) + " parameters, count is " +
                                                   std::to_string(count) + " (rank " +
                                                   std::to_string(trainer.layout().rank) + ")");
    }
    if (data == nullptr && count > 0) {
      throw Error(ErrorCode::kInvalidArgument, std::string(function) + ": the array is NULL on rank " +
                                                   std::to_string(trainer.layout().rank));
    }
    const std::string problem =
        incoming ? first_non_finite(static_cast<const float*>(data), count,
                                    "the values for layer " + std::to_string(layer))
                 : std::string();
    if (!problem.empty()) {
      throw Error(ErrorCode::kInvalidArgument, std::string(function) + ": " + problem + " on rank " +
                                                   std::to_string(trainer.layout().rank) + "; parameters unchanged");
    }
  } catch (...) {
    error = std::current_exception();
  }
  comm::agree_or_throw(trainer.parts().mpi->world(), arguments_of(function), error);
}

// FNV-1a over the bytes: a cheap fingerprint to check that every rank passed the same values. 32 bits, so it
// travels exactly in a double.
double fingerprint(const float* values, int64_t count) {
  uint32_t hash = 2166136261u;
  const auto* bytes = reinterpret_cast<const unsigned char*>(values);
  for (int64_t i = 0; i < count * static_cast<int64_t>(sizeof(float)); ++i) hash = (hash ^ bytes[i]) * 16777619u;
  return static_cast<double>(hash);
}

}  // namespace

int64_t layer_param_count(const Trainer& trainer, int layer) {
  if (!trainer.started()) throw Error(ErrorCode::kState, "trainer is not started");
  const std::vector<model::LayerShape> shapes = model::model_shape(trainer.config().model, trainer.parts().custom_layers);
  if (layer < 0 || static_cast<size_t>(layer) >= shapes.size()) {
    throw Error(ErrorCode::kInvalidArgument, "layer " + std::to_string(layer) + " is not a layer of the model (0.." +
                                                 std::to_string(shapes.size() - 1) + ")");
  }
  return shapes[static_cast<size_t>(layer)].params;
}

void get_layer_params(Trainer& trainer, int layer, float* out, int64_t count) {
  agree_on_arguments(trainer, "sluice_get_layer_params", layer, out, count, false);
  if (count == 0) return;
  // Exactly one rank holds the layer in replica 0: it sends.
  const bool sender = trainer.layout().replica == 0 && holds(trainer, layer);
  const double mine = sender ? trainer.layout().rank : -1.0;
  int root = -1;
  for (double rank : trainer.parts().mpi->world_group().all_gather(&mine, 1)) {
    if (rank >= 0) root = static_cast<int>(rank);
  }
  if (sender) {
    float* at = out;
    for (model::Parameter* p : local_layer(trainer, layer)) {
      trainer.parts().backend->to_host(p->value, at);
      at += p->value.size();
    }
  }
  trainer.parts().mpi->world_group().broadcast(out, count, root);
}

void set_layer_params(Trainer& trainer, int layer, const float* in, int64_t count) {
  agree_on_arguments(trainer, "sluice_set_layer_params", layer, in, count, true);
  // Replicas must stay identical: values that differ between ranks are refused, not half applied.
  const double mine = fingerprint(in, count);
  const std::vector<double> all = trainer.parts().mpi->world_group().all_gather(&mine, 1);
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) {
      throw Error(ErrorCode::kInvalidArgument, "sluice_set_layer_params: ranks 0 and " + std::to_string(r) +
                                                   " passed different values for layer " + std::to_string(layer) +
                                                   "; every rank must pass the same");
    }
  }
  const float* at = in;
  for (model::Parameter* p : local_layer(trainer, layer)) {
    // A new tensor, as a checkpoint load does: the optimizer holds pointers to the Tensor objects, not their memory.
    p->value = trainer.parts().backend->from_host(p->value.rows(), p->value.cols(), at);
    at += p->value.size();
  }
}

}  // namespace sluice::runtime
