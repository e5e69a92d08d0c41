// Builds the DataSource a config asks for (data.type), sized to the model: for the whole sample, or for one block of
// every sample under a domain split (pipeline.domain; docs/DOMAIN.md, "Data on blocks").
#pragma once

#include <cstdint>
#include <memory>

#include "core/config/config.h"
#include "core/config/domain_layout.h"
#include "core/data/data_source.h"

namespace sluice::data {

// Features per row that `model` outputs: the width of its last linear layer (or model.inputs when it has
// none), or -1 when a custom layer comes after it, since a custom layer's width is known only to the
// application that registered it.
int64_t model_output_features(const config::ModelSpec& model);

// synthetic -> SyntheticFieldData when the model's input and output are fields with the same number of spatial
// dimensions (whole fields; values keyed by the global point, so a domain run's blocks are the same samples), else
// SyntheticData (one-hot targets when loss is cross_entropy); hdf5 -> Hdf5Data checked against the model's widths
// and field shapes; external -> nullptr (the C API hands batches in; there is nothing to read).
// Throws sluice::Error(kConfig) for synthetic data when model_output_features() is -1: use the overload.
std::unique_ptr<DataSource> make_data_source(const config::Config& config);

// Same, with the target width given by the caller (e.g. the built model's real output width).
std::unique_ptr<DataSource> make_data_source(const config::Config& config, int64_t target_features);

// The box of the model's output field holding the points of `input_box` of its input field: the same box when the
// spatial extents agree, else scaled by output / input extent per dimension. Throws Error(kConfig) when the model's
// input or output is not a field of the same number of spatial dimensions, or when the scaled box is not whole points.
config::DomainBox output_block_box(const config::Config& config, const config::DomainBox& input_box);

// One block of every sample the undecomposed make_data_source gives, bit for bit: batch() fills rows of
// [C_in][input_box extents] inputs and [C_out][output_box extents] targets. synthetic -> SyntheticFieldData on the
// boxes (the model must take and give fields); hdf5 -> Hdf5Data with the same checks (widths, sample shapes) that
// reads only the boxes' hyperslabs (datasets stored [rows, C, D..]); external -> nullptr. `output_box` must be
// output_block_box(config, input_box). Throws Error(kInvalidArgument) for a box outside its field or an output box
// that is not the input box's, Error(kConfig) as output_block_box.
std::unique_ptr<DataSource> make_block_data_source(const config::Config& config, const config::DomainBox& input_box,
                                                   const config::DomainBox& output_box);

// What `sluice train` gives the rank of block `block` (row-major over the block grid) of the even split of
// config.pipeline.domain (config::even_domain_layout; absent: one block, the whole field): make_block_data_source
// with that block's input box and its output_block_box. Throws Error(kInvalidArgument) for a block outside
// [0, blocks), Error(kConfig) when pipeline.domain does not fit the model's input field.
std::unique_ptr<DataSource> make_data_source_for_block(const config::Config& config, int64_t block);

}  // namespace sluice::data
