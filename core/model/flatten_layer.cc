#include "core/model/flatten_layer.h"

namespace sluice::model {

kernels::Tensor FlattenLayer::forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  saved.tensors.clear();
  return x;
}

kernels::Tensor FlattenLayer::backward_input(const kernels::Tensor& dy, LayerSaved& saved) {
  (void)saved;
  return dy;  // a copy: the caller keeps its dy
}

}  // namespace sluice::model
