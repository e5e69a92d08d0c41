// Skip connections as tensors carried beside the main one. A layer named X whose output a later concat or add reads
// keeps a copy of that output, and the copy rides along every layer boundary up to its last reader, as extra
// feature columns after the main tensor's: [main | skip 1 | skip 2 ..], in the order the skips were made, so every
// stage's layers compute what the sequential run computes. Between pipeline stages a skip read two or more stages
// later goes straight from its producer's stage to its reader's instead (skip_routes.h): the stages between neither
// carry nor store it, so a stage's layers carry only the skips it makes or reads.
// Pure: from the layer list and each layer's own output width.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/layer_spec.h"

namespace sluice::model {

struct SkipSlot {
  std::string name;      // the layer that made it
  int64_t features = 0;  // its output width per sample
};

struct LayerCarry {
  std::vector<SkipSlot> in;   // carried into the layer, in the order they were made
  std::vector<SkipSlot> out;  // carried out of it: `in` less what the layer read last, plus its own kept output
  bool keeps_output = false;  // the layer is named and read later: its output is the last slot of `out`
  bool carries() const { return !in.empty() || !out.empty(); }
};

// Per layer; `main_out[i]` is layer i's own output width. The layer list was checked by the config parser (every
// `from` names an earlier layer).
std::vector<LayerCarry> skip_plan(const std::vector<config::LayerSpec>& layers, const std::vector<int64_t>& main_out);
// The same for the layers of a pipeline stage [first, last): its layers carry only the skips the stage touches (a
// layer of it makes or reads them); the others pass over it in their own messages. Layers outside the range keep
// the whole model's plan. [0, layers.size()) gives skip_plan's.
std::vector<LayerCarry> skip_plan(const std::vector<config::LayerSpec>& layers, const std::vector<int64_t>& main_out,
                                  int first, int last);
// Whether a layer of [first, last) makes (keeps its output for a later reader) or reads skip `name`.
bool touches(const std::vector<config::LayerSpec>& layers, const std::vector<LayerCarry>& plan, int first, int last,
             const std::string& name);

// Σ features of the slots.
int64_t carried_features(const std::vector<SkipSlot>& slots);

}  // namespace sluice::model
