// The sample shapes of sluice_trainer_input_shape / _output_shape and sluice_model_input_shape / _output_shape:
// a config::SampleShape written into the caller's dims[SLUICE_MAX_SAMPLE_DIMS] and rank.
#pragma once

#include <cstdint>
#include <string>

#include "capi/include/sluice/sluice.h"
#include "core/common/error.h"
#include "core/config/config.h"

namespace sluice::capi {

inline void write_sample_shape(const config::SampleShape& shape, int64_t* dims, int* rank) {
  if (dims == nullptr || rank == nullptr) throw Error(ErrorCode::kInvalidArgument, "dims or rank is NULL");
  if (shape.empty() || shape.size() > SLUICE_MAX_SAMPLE_DIMS) {
    throw Error(ErrorCode::kInternal, "a sample shape of " + std::to_string(shape.size()) + " extents");
  }
  for (std::size_t i = 0; i < shape.size(); ++i) dims[i] = shape[i];
  *rank = static_cast<int>(shape.size());
}

// The output shape the layers give `model`'s input shape, when it agrees with `features` (the width the built
// model reports); otherwise (a custom layer's width, unknown here) rows of `features`.
inline config::SampleShape output_sample_shape(const config::ModelSpec& model, int64_t features,
                                               const config::CustomWidths& widths) {
  try {
    config::SampleShape shape = config::output_shape(model.layers, config::input_shape_of(model), widths);
    if (config::features_of(shape) == features) return shape;
  } catch (const Error&) {
  }
  return {features};
}

}  // namespace sluice::capi
