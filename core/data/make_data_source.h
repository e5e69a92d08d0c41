// Builds the DataSource a config asks for (data.type), sized to the model.
#pragma once

#include <cstdint>
#include <memory>

#include "core/config/config.h"
#include "core/data/data_source.h"

namespace sluice::data {

// Features per row that `model` outputs: the width of its last linear layer (or model.inputs when it has
// none), or -1 when a custom layer comes after it, since a custom layer's width is known only to the
// application that registered it.
int64_t model_output_features(const config::ModelSpec& model);

// synthetic -> SyntheticData (one-hot targets when loss is cross_entropy), hdf5 -> Hdf5Data checked against
// the model's widths, external -> nullptr (the C API hands batches in; there is nothing to read).
// Throws sluice::Error(kConfig) for synthetic data when model_output_features() is -1: use the overload.
std::unique_ptr<DataSource> make_data_source(const config::Config& config);

// Same, with the target width given by the caller (e.g. the built model's real output width).
std::unique_ptr<DataSource> make_data_source(const config::Config& config, int64_t target_features);

}  // namespace sluice::data
