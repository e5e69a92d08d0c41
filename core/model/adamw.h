// AdamW (Loshchilov & Hutter): Adam moments with bias correction, weight decay decoupled from the gradient.
#pragma once

#include "core/model/optimizer.h"

namespace sluice::model {

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Parameter*> parameters, kernels::Backend& backend, double lr, double beta1, double beta2,
        double eps, double weight_decay);
  // slots_ point into this object's moment tensors: a copy would update the original's state.
  AdamW(const AdamW&) = delete;
  AdamW& operator=(const AdamW&) = delete;

  void step() override;
  std::vector<NamedTensor> state_tensors() override;

 private:
  std::vector<Parameter*> parameters_;
  kernels::Backend& backend_;
  kernels::AdamWHyper hyper_;
  // Never resized after construction: slots_ hold pointers into them.
  std::vector<kernels::Tensor> exp_avg_;
  std::vector<kernels::Tensor> exp_avg_sq_;
  std::vector<kernels::AdamWSlot> slots_;  // one per parameter, so a device backend updates all in few launches
};

}  // namespace sluice::model
