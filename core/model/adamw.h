// AdamW (Loshchilov & Hutter): Adam moments with bias correction, weight decay decoupled from the gradient.
#pragma once

#include "core/model/optimizer.h"

namespace sluice::model {

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Parameter*> parameters, kernels::Backend& backend, double lr, double beta1, double beta2,
        double eps, double weight_decay);
  void step() override;
  std::vector<NamedTensor> state_tensors() override;

 private:
  std::vector<Parameter*> parameters_;
  kernels::Backend& backend_;
  kernels::AdamWHyper hyper_;
  std::vector<kernels::Tensor> exp_avg_;
  std::vector<kernels::Tensor> exp_avg_sq_;
};

}  // namespace sluice::model
