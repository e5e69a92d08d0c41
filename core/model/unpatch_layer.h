// unpatch: tokens [D, T] back to a field [C, g1·p1, ..] (MAE's unpatchify): token (g1, ..) in row-major grid order
// fills the patch at (g1·p1, ..), its D = C·Π p features read as (p1, .., c), the channel fastest. Parameterless: a
// fixed permutation of each sample's values (core/config/sample_shape.h: unpatch_source), its backward the inverse.
#pragma once

#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

class UnpatchLayer : public Layer {
 public:
  // `source`: output column j reads input column source[j]; a permutation of [0, source.size()).
  UnpatchLayer(kernels::Backend& backend, std::vector<int64_t> source);

  std::string type() const override { return "unpatch"; }
  int64_t in_features() const override { return static_cast<int64_t>(source_.size()); }
  int64_t out_features() const override { return static_cast<int64_t>(source_.size()); }
  double flops_per_sample() const override { return 2.0 * static_cast<double>(source_.size()); }

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  std::vector<int64_t> source_;
  std::vector<int64_t> inverse_;  // input column i goes to output column inverse_[i]
};

}  // namespace sluice::model
