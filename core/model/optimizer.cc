#include "core/model/optimizer.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/adamw.h"
#include "core/model/sgd.h"

namespace sluice::model {
namespace {

void require(bool ok, const std::string& key, double value, const std::string& rule) {
  if (!ok) throw Error(ErrorCode::kConfig, "optimizer." + key + " must be " + rule + ", got " + std::to_string(value));
}

}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const config::OptimizerSpec& spec, std::vector<Parameter*> parameters,
                                          kernels::Backend& backend) {
  require(spec.lr > 0.0, "lr", spec.lr, "> 0");
  require(spec.weight_decay >= 0.0, "weight_decay", spec.weight_decay, ">= 0");
  switch (spec.type) {
    case config::OptimizerType::kSgd:
      require(spec.momentum >= 0.0 && spec.momentum < 1.0, "momentum", spec.momentum, "in [0, 1)");
      return std::make_unique<Sgd>(std::move(parameters), backend, spec.lr, spec.momentum, spec.weight_decay);
    case config::OptimizerType::kAdamW:
      require(spec.beta1 >= 0.0 && spec.beta1 < 1.0, "beta1", spec.beta1, "in [0, 1)");
      require(spec.beta2 >= 0.0 && spec.beta2 < 1.0, "beta2", spec.beta2, "in [0, 1)");
      require(spec.eps > 0.0, "eps", spec.eps, "> 0");
      return std::make_unique<AdamW>(std::move(parameters), backend, spec.lr, spec.beta1, spec.beta2, spec.eps,
                                     spec.weight_decay);
  }
  throw Error(ErrorCode::kInternal, "optimizer.type " + std::to_string(static_cast<int>(spec.type)) + " is unknown");
}

double grad_norm_sq(const std::vector<Parameter*>& parameters, kernels::Backend& backend) {
  double total = 0.0;
  for (const Parameter* parameter : parameters) total += backend.sum_of_squares(parameter->grad);
  return total;
}

double clip_factor(double global_norm_sq, double max_norm) {
  if (max_norm <= 0.0) return 1.0;
  const double norm = std::sqrt(global_norm_sq);
  // The small epsilon (as in PyTorch's clip_grad_norm_) keeps a zero norm from dividing by zero.
  return norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
}

void scale_grads(const std::vector<Parameter*>& parameters, double factor, kernels::Backend& backend) {
  for (Parameter* parameter : parameters) backend.scale(static_cast<float>(factor), parameter->grad);
}

}  // namespace sluice::model
