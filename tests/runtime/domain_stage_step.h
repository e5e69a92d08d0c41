// The optimizer step the stage-level domain tests run (domain_stage_test, domain_norm_layer_test): 2 micro-batches
// F0, F1, B0, then I1 and W1, then finish_domain_step, with an MSE loss on the block (compute_domain_loss) or, with no
// domain, on the whole field. Each test builds its own stage and samples; this is the order of calls they share.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/model/field_domain.h"
#include "core/model/loss.h"
#include "core/model/stage_module.h"
#include "kernels/tensor.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::runtime {

struct StageStepResults {
  std::vector<kernels::Tensor> y, dx;
  std::vector<double> losses;
  std::vector<kernels::Tensor> grads;  // every parameter's, in the stage's order
};

// Cuts a whole-field tensor [samples][channels · Π global] to the run's block (identity for the whole field).
using CutToBlock = std::function<kernels::Tensor(const kernels::Tensor&, int64_t)>;

// Micro-batch m: `samples` random samples (seeds 10 + m inputs, 20 + m targets) of `in` / `out` channels over
// `points` whole-field points, cut by `cut`; `step_of(m)` its StepInfo. `domain` null: the plain loss.
inline StageStepResults run_stage_step(kernels::Backend& backend, model::StageModule& stage,
                                       model::FieldDomain* domain, const CutToBlock& cut, int64_t samples,
                                       int64_t in, int64_t out, int64_t points,
                                       const std::function<model::StepInfo(int)>& step_of) {
  StageStepResults r;
  std::vector<kernels::Tensor> grads;
  for (int m = 0; m < 2; ++m) {
    const unsigned seed = static_cast<unsigned>(m);
    r.y.push_back(stage.forward(m, cut(kernels::random_tensor(samples, in * points, 10 + seed), in), step_of(m)));
    const kernels::Tensor target = cut(kernels::random_tensor(samples, out * points, 20 + seed), out);
    model::LossResult loss =
        domain != nullptr
            ? model::compute_domain_loss(backend, *domain, model::LossKind::kMse, out, r.y.back(), target,
                                         2 * samples)
            : model::compute_loss(backend, model::LossKind::kMse, r.y.back(), target, 2 * samples);
    r.losses.push_back(loss.sum);
    grads.push_back(std::move(loss.grad));
  }
  r.dx.push_back(stage.backward(0, grads[0]));
  r.dx.push_back(stage.backward_input(1, grads[1]));
  stage.backward_weight(1);
  stage.finish_domain_step();
  for (model::Parameter* p : stage.parameters()) r.grads.push_back(p->grad);
  return r;
}

}  // namespace sluice::runtime
