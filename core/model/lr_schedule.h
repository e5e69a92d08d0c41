// The learning rate of an optimizer step: one pure function of the schedule, the base lr and the number of
// optimizer steps already taken. The trainer calls it before every optimizer step (not every train_step call, so
// optimizer.accumulate does not change the schedule), and checkpoints restore that count (/train/optimizer_steps),
// so a resumed run continues the schedule exactly.
//
// Semantics follow PyTorch's schedulers with scheduler.step() after every optimizer.step(): the update numbered
// `step` (0 for the first) uses PyTorch's lr at last_epoch == step, in closed form (`_get_closed_form_lr`):
//   constant       base
//   step           StepLR:       base * gamma^floor(t / step_size)
//   multi_step     MultiStepLR:  base * gamma^(number of milestones <= t)
//   cosine         CosineAnnealingLR (T_max = total_steps - warmup_steps, eta_min = min_lr):
//                  min_lr + (base - min_lr) * (1 + cos(pi * t / T_max)) / 2, held at min_lr for t >= T_max (PyTorch's
//                  closed form would rise again, which no one wants at the end of a run)
//   polynomial     PolynomialLR (total_iters = total_steps - warmup_steps): final_lr + (base - final_lr) *
//                  (1 - min(t, T) / T)^power (final_lr = 0 is PyTorch's formula)
// With warmup_steps = W (linear_warmup is constant with a warmup), steps s < W use LinearLR (end_factor 1,
// total_iters W): base * (start_factor + (1 - start_factor) * s / W), and t = s - W above: SequentialLR with the
// milestone W, so milestones and step_size count from the warmup's end.
#pragma once

#include <cstdint>

#include "core/config/lr_schedule_spec.h"

namespace sluice::model {

// `spec` must be resolved by the config parser (total_steps set where the type needs it).
double scheduled_lr(const config::LrScheduleSpec& spec, double base_lr, int64_t step);

}  // namespace sluice::model
