// scheduled_lr against PyTorch's schedulers. The expected values are not written down: they come from PyTorch's
// own RECURSIVE update rules (the `get_lr` methods of torch/optim/lr_scheduler.py, v2.x: StepLR, MultiStepLR,
// LinearLR, CosineAnnealingLR, PolynomialLR, and SequentialLR for a warmup followed by a schedule), replayed step
// by step here, while scheduled_lr evaluates the closed forms (`_get_closed_form_lr`). The two agree up to
// rounding, so a wrong closed form (an off-by-one step, a wrong exponent) fails.
#include "core/model/lr_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace sluice::model {
namespace {

using config::LrScheduleSpec;
using config::LrScheduleType;

constexpr double kBase = 0.1;
const double kPi = std::acos(-1.0);

// One PyTorch get_lr: the lr at epoch e from the lr at e - 1 (`previous`; at e = 0 the base lr).
using Recurrence = std::function<double(int64_t e, double previous)>;

// PyTorch's lr for epochs 0 .. count-1 of the recurrence.
std::vector<double> replay(const Recurrence& next, int64_t count) {
  std::vector<double> lrs;
  double lr = kBase;
  for (int64_t e = 0; e < count; ++e) {
    lr = next(e, lr);
    lrs.push_back(lr);
  }
  return lrs;
}

void expect_matches(const LrScheduleSpec& spec, const std::vector<double>& pytorch, int64_t first_step = 0) {
  for (size_t i = 0; i < pytorch.size(); ++i) {
    const int64_t step = first_step + static_cast<int64_t>(i);
    EXPECT_NEAR(scheduled_lr(spec, kBase, step), pytorch[i], 1e-12 * kBase) << "step " << step;
  }
}

// StepLR.get_lr: lr * gamma when e > 0 and e % step_size == 0, else unchanged.
Recurrence step_lr(int64_t step_size, double gamma) {
  return [=](int64_t e, double lr) { return (e == 0 || e % step_size != 0) ? lr : lr * gamma; };
}

// CosineAnnealingLR.get_lr (recursive branch; e <= T_max, so the restart branch never applies).
Recurrence cosine_lr(int64_t t_max, double eta_min) {
  return [=](int64_t e, double lr) {
    if (e == 0) return lr;
    return (1 + std::cos(kPi * e / t_max)) / (1 + std::cos(kPi * (e - 1) / t_max)) * (lr - eta_min) + eta_min;
  };
}

// PolynomialLR.get_lr, applied to lr - final_lr (PyTorch's has final_lr 0; ours shifts the curve by it).
Recurrence polynomial_lr(int64_t total, double power, double final_lr) {
  return [=](int64_t e, double lr) {
    if (e == 0 || e > total) return lr;
    const double factor = std::pow((1.0 - static_cast<double>(e) / total) / (1.0 - static_cast<double>(e - 1) / total),
                                   power);
    return final_lr + (lr - final_lr) * factor;
  };
}

// LinearLR.get_lr with end_factor 1 and total_iters W.
Recurrence linear_lr(double start, int64_t total) {
  return [=](int64_t e, double lr) {
    if (e == 0) return kBase * start;
    if (e > total) return lr;
    return lr * (1.0 + (1.0 - start) / (total * start + (e - 1) * (1.0 - start)));
  };
}

TEST(LrScheduleTest, ConstantIsTheBaseLr) {
  LrScheduleSpec spec;
  for (int64_t step : {0, 1, 17, 100000}) EXPECT_EQ(scheduled_lr(spec, kBase, step), kBase);
}

TEST(LrScheduleTest, StepMatchesStepLR) {
  LrScheduleSpec spec;
  spec.type = LrScheduleType::kStep;
  spec.step_size = 3;
  spec.gamma = 0.5;
  expect_matches(spec, replay(step_lr(3, 0.5), 20));
}

TEST(LrScheduleTest, MultiStepMatchesMultiStepLR) {
  LrScheduleSpec spec;
  spec.type = LrScheduleType::kMultiStep;
  spec.milestones = {2, 5, 11};
  spec.gamma = 0.3;
  // MultiStepLR.get_lr: lr * gamma^(times e appears in milestones).
  const Recurrence multi = [&](int64_t e, double lr) {
    const bool hit = std::count(spec.milestones.begin(), spec.milestones.end(), e) > 0;
    return hit ? lr * spec.gamma : lr;
  };
  expect_matches(spec, replay(multi, 16));
}

TEST(LrScheduleTest, CosineMatchesCosineAnnealingLRAndHoldsItsFloor) {
  LrScheduleSpec spec;
  spec.type = LrScheduleType::kCosine;
  spec.total_steps = 10;
  spec.min_lr = 0.01;
  expect_matches(spec, replay(cosine_lr(10, 0.01), 11));  // epochs 0 .. T_max
  for (int64_t step : {11, 12, 50}) EXPECT_EQ(scheduled_lr(spec, kBase, step), spec.min_lr);
}

TEST(LrScheduleTest, PolynomialMatchesPolynomialLR) {
  LrScheduleSpec spec;
  spec.type = LrScheduleType::kPolynomial;
  spec.total_steps = 8;
  spec.power = 2.0;
  expect_matches(spec, replay(polynomial_lr(8, 2.0, 0.0), 12));
  spec.final_lr = 0.02;
  expect_matches(spec, replay(polynomial_lr(8, 2.0, 0.02), 12));
}

TEST(LrScheduleTest, LinearWarmupMatchesLinearLR) {
  LrScheduleSpec spec;
  spec.type = LrScheduleType::kLinearWarmup;
  spec.warmup_steps = 5;
  expect_matches(spec, replay(linear_lr(1.0 / 3.0, 5), 9));  // PyTorch's default start_factor
  spec.start_factor = 0.1;
  expect_matches(spec, replay(linear_lr(0.1, 5), 9));
}

// SequentialLR([LinearLR(W), CosineAnnealingLR(T - W)], milestones=[W]): the cosine restarts its count at W.
TEST(LrScheduleTest, WarmupThenCosineMatchesSequentialLR) {
  LrScheduleSpec spec;
  spec.type = LrScheduleType::kCosine;
  spec.warmup_steps = 4;
  spec.start_factor = 0.25;
  spec.total_steps = 12;
  expect_matches(spec, replay(linear_lr(0.25, 4), 4));
  expect_matches(spec, replay(cosine_lr(8, 0.0), 9), 4);
}

}  // namespace
}  // namespace sluice::model
