// Optimizers over a rank's parameters, with their state exposed by name for checkpoints, and the pieces of
// global-norm gradient clipping (the caller sums grad_norm_sq over ranks; this code includes no MPI).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

struct NamedTensor {
  std::string name;          // "<parameter qualified name>.<state>", e.g. "layers.0.weight.exp_avg"
  kernels::Tensor* tensor;   // live state: write into it to restore a checkpoint
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update from the parameters' current gradients (which the caller has reduced and clipped).
  virtual void step() = 0;
  virtual std::vector<NamedTensor> state_tensors() = 0;

  // Completed updates; AdamW's bias correction depends on it, so checkpoints must save and restore it.
  int64_t step_count() const { return step_count_; }
  void set_step_count(int64_t count) { step_count_ = count; }
  double lr() const { return lr_; }
  // The lr of the next step(): the trainer sets it from optimizer.lr_schedule before every step.
  void set_lr(double lr) { lr_ = lr; }

 protected:
  explicit Optimizer(double lr) : lr_(lr) {}
  int64_t step_count_ = 0;
  double lr_;
};

// sgd | adamw from the config; unknown types and bad hyper-parameters throw Error(kConfig) naming the key.
std::unique_ptr<Optimizer> make_optimizer(const config::OptimizerSpec& spec, std::vector<Parameter*> parameters,
                                          kernels::Backend& backend);

// This rank's share of the squared global gradient norm: sum of squares of all its gradients.
double grad_norm_sq(const std::vector<Parameter*>& parameters, kernels::Backend& backend);
// Factor to multiply every gradient by so the global norm is at most max_norm (1 when no clipping is needed or
// max_norm <= 0, which means clipping is off).
double clip_factor(double global_norm_sq, double max_norm);
void scale_grads(const std::vector<Parameter*>& parameters, double factor, kernels::Backend& backend);

}  // namespace sluice::model
