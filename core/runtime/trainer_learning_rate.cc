// The trainer's learning rate: optimizer.lr_schedule at the optimizer's step count, or the host's override
// (sluice_set_learning_rate). Kept apart from trainer.cc so the schedule has one way into the optimizer.
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "core/comm/agreement.h"
#include "core/model/lr_schedule.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

double Trainer::next_learning_rate() const {
  if (lr_override_ > 0.0) return lr_override_;
  return model::scheduled_lr(cfg_.optimizer.lr_schedule, cfg_.optimizer.lr, parts_.optimizer->step_count());
}

void Trainer::set_learning_rate(double lr) {
  if (!started_) throw Error(ErrorCode::kState, "trainer is not started");
  std::exception_ptr error;
  if (!(lr >= 0.0 && std::isfinite(lr))) {
    error = std::make_exception_ptr(Error(ErrorCode::kInvalidArgument,
                                          "learning rate must be finite and >= 0 (0: back to optimizer.lr_schedule), "
                                          "got " + std::to_string(lr) + " on rank " + std::to_string(layout().rank)));
  }
  comm::agree_or_throw(parts_.mpi->world(), arguments_of("sluice_set_learning_rate"), error);
  // Replicas update the same parameters: one rank with another lr would silently split them apart.
  const std::vector<double> all = parts_.mpi->world_group().all_gather(&lr, 1);
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) {
      throw Error(ErrorCode::kInvalidArgument, "ranks passed different learning rates (rank 0: " +
                                                   std::to_string(all[0]) + ", rank " + std::to_string(r) + ": " +
                                                   std::to_string(all[r]) + "); every rank must pass the same");
    }
  }
  lr_override_ = lr;
}

}  // namespace sluice::runtime
