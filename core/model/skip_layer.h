// A layer at a boundary where skip tensors ride beside the main one (core/model/skip_plan.h), or a concat / add
// that reads one. Its input is [main | carried skips], its output [main' | carried skips']: the inner layer (none
// for concat and add) sees only the main part, the carried slots pass through, a named layer's output is kept as a
// new slot, and a concat or add joins the slot it reads to the main tensor.
// Backward: the main gradient is the next layer's plus, for a kept output, the gradient its readers sent back in its
// slot; a reader's gradient for the slot it read is added to the slot's gradient from later readers (so the readers'
// gradients reach the producer summed from the last reader to the first). The sequential reference builds the same
// layers, so pipelined and sequential runs add them in the same order.
#pragma once

#include <memory>
#include <string>

#include "core/model/layer.h"
#include "core/model/skip_plan.h"
#include "kernels/backend.h"

namespace sluice::model {

enum class Join { kNone, kConcat, kAdd };

class SkipLayer : public Layer {
 public:
  // `inner`: the layer itself (null for a concat or add, `join` says which); `main_in` / `main_out`: the main
  // tensor's width before and after it; `own_name`: the layer's name, whose output is kept when carry.keeps_output;
  // `from`: the slot a concat or add reads.
  SkipLayer(kernels::Backend& backend, std::unique_ptr<Layer> inner, Join join, std::string own_name, std::string from,
            int64_t main_in, int64_t main_out, LayerCarry carry);

  std::string type() const override;
  int64_t in_features() const override { return main_in_ + carried_features(carry_.in); }
  int64_t out_features() const override { return main_out_ + carried_features(carry_.out); }
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override;
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  // The model's first layer (nothing carried in): the inner layer's own without-dx pass, so a named layer 0 skips
  // dL/d(model input) like an unnamed one (on a split: no backward halo fill).
  void backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void finish_domain_step() override;

 private:
  // Column where slot `name` starts in a tensor [main (width main) | slots]; -1 when it is not among them.
  static int64_t offset_of(const std::vector<SkipSlot>& slots, int64_t main, const std::string& name);
  kernels::Tensor columns(const kernels::Tensor& t, int64_t first, int64_t count);
  kernels::Tensor joined(const kernels::Tensor& x, kernels::Tensor main);
  // dL/d(main output): the next layer's gradient plus, for a kept output, its readers' gradient.
  kernels::Tensor main_gradient(const kernels::Tensor& dy);
  kernels::Tensor carried_gradients(const kernels::Tensor& dy, kernels::Tensor dx_main, const kernels::Tensor* d_read);

  kernels::Backend& backend_;
  std::unique_ptr<Layer> inner_;
  Join join_;
  std::string own_name_, from_;
  int64_t main_in_, main_out_;
  LayerCarry carry_;
};

}  // namespace sluice::model
