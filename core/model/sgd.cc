#include "core/model/sgd.h"

namespace sluice::model {

Sgd::Sgd(std::vector<Parameter*> parameters, kernels::Backend& backend, double lr, double momentum,
         double weight_decay)
    : Optimizer(lr), parameters_(std::move(parameters)), backend_(backend), momentum_(momentum),
      weight_decay_(weight_decay) {
  for (Parameter* parameter : parameters_) {
    velocity_.push_back(backend.zeros(parameter->value.rows(), parameter->value.cols()));
  }
  // Pointers to the Tensor objects, not their memory: a checkpoint restore or zero_grad that replaces a tensor's
  // buffer is still seen.
  for (size_t i = 0; i < parameters_.size(); ++i) {
    slots_.push_back(kernels::SgdSlot{&parameters_[i]->grad, &velocity_[i], &parameters_[i]->value});
  }
}

void Sgd::step() {
  kernels::SgdHyper hyper;
  hyper.lr = static_cast<float>(lr_);
  hyper.momentum = static_cast<float>(momentum_);
  hyper.weight_decay = static_cast<float>(weight_decay_);
  backend_.sgd_update_many(hyper, slots_);
  ++step_count_;
}

std::vector<NamedTensor> Sgd::state_tensors() {
  std::vector<NamedTensor> state;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    state.push_back(NamedTensor{parameters_[i]->qualified_name() + ".momentum", &velocity_[i]});
  }
  return state;
}

}  // namespace sluice::model
