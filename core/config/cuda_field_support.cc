#include "core/config/cuda_field_support.h"

#include "core/config/sample_shape.h"

namespace sluice::config {

std::optional<CudaFieldGap> first_layer_cuda_lacks(const ModelSpec& model) {
  ShapeWalk walk(input_shape_of(model));
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const LayerSpec& layer = model.layers[i];
    const bool on_field = is_field(walk.current());
    walk.next(layer);
    const std::string type = layer_type_name(layer.type);
    switch (layer.type) {
      case LayerType::kGroupNorm:
      case LayerType::kInstanceNorm: return CudaFieldGap{i, type + " has no CUDA kernel yet"};
      case LayerType::kLayerNorm:
        if (on_field) return CudaFieldGap{i, "layernorm over a field's channels has no CUDA kernel yet"};
        break;
      default: break;
    }
  }
  return std::nullopt;
}

bool loss_needs_field_cross_entropy(const ModelSpec& model, model::LossKind loss) {
  if (loss != model::LossKind::kCrossEntropy) return false;
  const SampleShape out = output_shape(model.layers, input_shape_of(model));
  return is_field(out) && field_points(out) > 1;
}

}  // namespace sluice::config
