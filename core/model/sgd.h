// SGD with momentum (PyTorch's formulation: velocity = momentum * velocity + grad; param -= lr * velocity).
#pragma once

#include "core/model/optimizer.h"

namespace sluice::model {

class Sgd : public Optimizer {
 public:
  Sgd(std::vector<Parameter*> parameters, kernels::Backend& backend, double lr, double momentum,
      double weight_decay);
  void step() override;
  std::vector<NamedTensor> state_tensors() override;

 private:
  std::vector<Parameter*> parameters_;
  kernels::Backend& backend_;
  double momentum_;
  double weight_decay_;
  std::vector<kernels::Tensor> velocity_;
};

}  // namespace sluice::model
