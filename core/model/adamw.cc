#include "core/model/adamw.h"

namespace sluice::model {

AdamW::AdamW(std::vector<Parameter*> parameters, kernels::Backend& backend, double lr, double beta1, double beta2,
             double eps, double weight_decay)
    : Optimizer(lr), parameters_(std::move(parameters)), backend_(backend) {
  hyper_.beta1 = static_cast<float>(beta1);
  hyper_.beta2 = static_cast<float>(beta2);
  hyper_.eps = static_cast<float>(eps);
  hyper_.weight_decay = static_cast<float>(weight_decay);
  for (Parameter* parameter : parameters_) {
    exp_avg_.push_back(backend.zeros(parameter->value.rows(), parameter->value.cols()));
    exp_avg_sq_.push_back(backend.zeros(parameter->value.rows(), parameter->value.cols()));
  }
  // Pointers to the Tensor objects, not their memory: a checkpoint restore or zero_grad that replaces a tensor's
  // buffer is still seen.
  for (size_t i = 0; i < parameters_.size(); ++i) {
    slots_.push_back(
        kernels::AdamWSlot{&parameters_[i]->grad, &exp_avg_[i], &exp_avg_sq_[i], &parameters_[i]->value});
  }
}

void AdamW::step() {
  ++step_count_;
  hyper_.lr = static_cast<float>(lr_);
  backend_.adamw_update_many(hyper_, step_count_, slots_);
}

std::vector<NamedTensor> AdamW::state_tensors() {
  std::vector<NamedTensor> state;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    state.push_back(NamedTensor{parameters_[i]->qualified_name() + ".exp_avg", &exp_avg_[i]});
    state.push_back(NamedTensor{parameters_[i]->qualified_name() + ".exp_avg_sq", &exp_avg_sq_[i]});
  }
  return state;
}

}  // namespace sluice::model
