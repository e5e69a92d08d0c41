#include "tools/sluice/plan_declared_layers.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "core/common/error.h"
#include "core/config/sample_shape.h"
#include "core/model/layer.h"
#include "core/model/layer_costs.h"

namespace sluice::tools {

namespace {

// A custom layer as its config entry declares it: the widths, forward FLOPs (0: the 6·in·out estimate every custom
// layer gets) and the bytes a sample keeps for the backward (0: its input, as most layers keep).
class DeclaredLayer : public model::Layer {
 public:
  DeclaredLayer(const config::LayerSpec& spec, int64_t in)
      : name_(spec.name), in_(in), out_(config::features_of(spec.declared_outputs)), flops_(spec.cost_flops),
        bytes_(spec.cost_bytes) {}

  std::string type() const override { return "custom:" + name_; }
  int64_t in_features() const override { return in_; }
  int64_t out_features() const override { return out_; }
  double flops_per_sample() const override { return flops_ > 0.0 ? 3.0 * flops_ : model::dense_flops(in_, out_); }
  double stash_bytes_per_sample() const override { return bytes_; }

  kernels::Tensor forward(kernels::Tensor x, const model::ForwardContext&, model::LayerSaved& saved) override {
    const int64_t rows = x.rows();
    if (bytes_ > 0.0) {
      saved.tensors.push_back(kernels::Tensor::host(rows, static_cast<int64_t>(std::ceil(bytes_ / sizeof(float)))));
    } else {
      saved.tensors.push_back(std::move(x));
    }
    return kernels::Tensor::host(rows, out_);
  }
  kernels::Tensor backward_input(const kernels::Tensor& dy, model::LayerSaved&) override {
    return kernels::Tensor::host(dy.rows(), in_);
  }

 private:
  std::string name_;
  int64_t in_;
  int64_t out_;
  double flops_;
  double bytes_;
};

}  // namespace

model::CustomLayerRegistry declared_layers(const config::ModelSpec& model) {
  model::CustomLayerRegistry registry;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const config::LayerSpec& spec = model.layers[i];
    if (spec.type != config::LayerType::kCustom) continue;
    if (spec.declared_outputs.empty()) {
      throw Error(ErrorCode::kConfig,
                  "plan: layer " + std::to_string(i) + " (custom layer '" + spec.name + "'" +
                      (spec.line > 0 ? ", line " + std::to_string(spec.line) : std::string()) +
                      ") declares no outputs: plan needs its width without the application, e.g. {type: custom, "
                      "name: " + spec.name + ", outputs: [C, D..], cost: {flops: F, bytes: B}}");
    }
    registry[spec.name] = [spec](int64_t in) { return std::make_unique<DeclaredLayer>(spec, in); };
  }
  return registry;
}

}  // namespace sluice::tools
