// SGD with momentum (PyTorch's formulation: velocity = momentum * velocity + grad; param -= lr * velocity).
#pragma once

#include "core/model/optimizer.h"

namespace sluice::model {

class Sgd : public Optimizer {
 public:
  Sgd(std::vector<Parameter*> parameters, kernels::Backend& backend, double lr, double momentum,
      double weight_decay);
  // slots_ point into this object's velocity_: a copy would update the original's state.
  Sgd(const Sgd&) = delete;
  Sgd& operator=(const Sgd&) = delete;

  void step() override;
  std::vector<NamedTensor> state_tensors() override;

 private:
  std::vector<Parameter*> parameters_;
  kernels::Backend& backend_;
  double momentum_;
  double weight_decay_;
  std::vector<kernels::Tensor> velocity_;  // never resized after construction: slots_ hold pointers into it
  std::vector<kernels::SgdSlot> slots_;    // one per parameter, so a device backend updates all in few launches
};

}  // namespace sluice::model
