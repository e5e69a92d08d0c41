// dropout(p): inverted dropout while training (kept values scaled by 1/(1-p)), the identity otherwise. The mask
// comes from the counter-based RNG keyed by (seed, global layer, global sample index, feature), so it is
// regenerated on backward and on a recompute instead of being stored, and a sample gets the same mask however the
// run is laid out (replicas, stages, micro-batches, accumulation calls). On one rank's block of a split field the
// feature is the WHOLE field's (channel · Π global extents + the point's global index), so the block's mask is the
// corresponding part of the undecomposed run's whatever the split.
#pragma once

#include <optional>

#include "core/model/field_domain.h"
#include "core/model/layer.h"
#include "core/model/layer_costs.h"
#include "kernels/backend.h"

namespace sluice::model {

class DropoutLayer : public Layer {
 public:
  // `features` per sample; with `domain` (the level of the layer's input) the block's, and the mask is keyed by the
  // whole field's features (Backend::dropout_block_forward). No message: the domain's extents are all it needs.
  DropoutLayer(kernels::Backend& backend, int64_t features, float p, const FieldDomain* domain = nullptr);

  std::string type() const override { return "dropout"; }
  int64_t in_features() const override { return features_; }
  int64_t out_features() const override { return features_; }
  double flops_per_sample() const override { return dropout_flops(features_); }

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  bool active(const ForwardContext& context) const { return context.training && p_ > 0.0f; }

  kernels::Backend& backend_;
  int64_t features_;
  float p_;
  std::optional<kernels::FieldBlockKey> block_;  // on a domain: where the block sits in the whole field
};

}  // namespace sluice::model
