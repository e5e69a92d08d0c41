#include "core/config/cuda_field_support.h"

#include "core/config/sample_shape.h"

namespace sluice::config {

bool loss_needs_field_cross_entropy(const ModelSpec& model, model::LossKind loss) {
  if (loss != model::LossKind::kCrossEntropy) return false;
  const SampleShape out = output_shape(model.layers, input_shape_of(model));
  return is_field(out) && field_points(out) > 1;
}

}  // namespace sluice::config
