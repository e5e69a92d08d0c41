#include "core/model/unpatch_layer.h"

#include <string>
#include <utility>

#include "core/common/error.h"

namespace sluice::model {

using kernels::Tensor;

UnpatchLayer::UnpatchLayer(kernels::Backend& backend, std::vector<int64_t> source)
    : backend_(backend), source_(std::move(source)), inverse_(source_.size(), -1) {
  for (size_t j = 0; j < source_.size(); ++j) {
    const int64_t i = source_[j];
    if (i < 0 || i >= static_cast<int64_t>(source_.size()) || inverse_[static_cast<size_t>(i)] >= 0) {
      throw Error(ErrorCode::kInternal, "unpatch: its gather is not a permutation (column " + std::to_string(j) + ")");
    }
    inverse_[static_cast<size_t>(i)] = static_cast<int64_t>(j);
  }
}

Tensor UnpatchLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  (void)saved;
  Tensor y = backend_.empty(x.rows(), out_features());
  backend_.gather_columns(source_, x, y);
  return y;
}

Tensor UnpatchLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  Tensor dx = backend_.empty(dy.rows(), in_features());
  backend_.gather_columns(inverse_, dy, dx);
  return dx;
}

}  // namespace sluice::model
