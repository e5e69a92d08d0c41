// Builds the model's full layer list from the typed config. The LayerSpecs are trusted as the config parser
// checked them; only what the application's custom-layer factories return is checked here, with
// Error(kConfig) naming the layer as "model.layers[i] (line N)".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/model/field_domain.h"
#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

// Makes an application-defined layer (`type: custom, name: ...`) that takes `in_features` inputs.
using CustomLayerFactory = std::function<std::unique_ptr<Layer>(int64_t in_features)>;
using CustomLayerRegistry = std::map<std::string, CustomLayerFactory>;

// Layers get their global index (set_global_index) but NOT their initial values: call init_layers (or load a
// checkpoint) on the layers a rank keeps.
std::vector<std::unique_ptr<Layer>> build_layers(const config::ModelSpec& spec, kernels::Backend& backend,
                                                 const CustomLayerRegistry& custom_layers = {});

// Only model layers [first, last), the first taking samples of shape `in_shape` (model_shape.h has every layer's
// shapes): what a pipeline rank builds, so that it allocates only its share of the model. Initial values do not
// depend on which layers are built together (the RNG is keyed by global layer index). [first, last) is one pipeline
// stage: its layers carry only the skip tensors it makes or reads (core/model/skip_plan.h), so its boundary widths
// can be narrower than model_shape's, which carry every skip.
std::vector<std::unique_ptr<Layer>> build_layers(const config::ModelSpec& spec, kernels::Backend& backend,
                                                 const CustomLayerRegistry& custom_layers, int first, int last,
                                                 const config::SampleShape& in_shape);

// The same layers on this rank's block of a domain-split field (core/model/field_domain.h; docs/DOMAIN.md "The
// model's layers on a block"). `domain` is the block at the MODEL INPUT's level (null: build_layers above); each
// layer gets the level of its input (the input's extents divided by the pools and strides before it, multiplied by
// the upsamplings) and the block's widths. A layer type the layer table (config::runs_split) marks as needing the
// whole sample is refused (kUnsupported, naming the layer); every other type is built on the block.
std::vector<std::unique_ptr<Layer>> build_layers(const config::ModelSpec& spec, kernels::Backend& backend,
                                                 const CustomLayerRegistry& custom_layers, int first, int last,
                                                 const config::SampleShape& in_shape, FieldDomain* domain);

// Model layer `index` of type custom, built through its registered factory and checked (registered, returns a
// layer, takes `in_features`, gives at least one output); Error(kConfig) naming the layer otherwise.
std::unique_ptr<Layer> build_custom(size_t index, const config::LayerSpec& layer, int64_t in_features,
                                    const CustomLayerRegistry& custom_layers);

void init_layers(std::vector<std::unique_ptr<Layer>>& layers, uint64_t seed);

}  // namespace sluice::model
