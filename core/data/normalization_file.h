// normalization.file: given normalization statistics read from an HDF5 file (datasets inputs_mean, inputs_std,
// targets_mean, targets_std, 1-D or one row, any float or integer type) instead of lists in the config. Read when
// the trainer starts, not by the config parser, so a checkpoint's stored config (whose statistics are in the
// checkpoint itself) never needs the file again.
#pragma once

#include "core/config/normalization_spec.h"

namespace sluice::data {

// `spec` with the mean and std of each `given` side that has no lists filled from spec.file; unchanged when
// spec.file is empty. Errors name normalization.file, the file and the dataset: kIo when the file is missing or
// not HDF5, kConfig when a dataset is missing, not numeric, not 1-D, or a std entry is not finite and > 0 (the
// lengths are checked against the model by runtime::Normalization::configure).
config::NormalizationSpec with_file_statistics(const config::NormalizationSpec& spec);

}  // namespace sluice::data
