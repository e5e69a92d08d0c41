#include "core/runtime/evaluation.h"

#include <exception>

#include <optional>
#include <string>
#include <vector>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/common/non_finite.h"
#include "core/config/sample_shape.h"
#include "core/model/loss.h"
#include "core/runtime/class_targets.h"
#include "core/runtime/microbatch_rows.h"

namespace sluice::runtime {
namespace {

// Collective: this call's own argument agreement (what sluice_join_with_error("sluice_evaluate") joins), so that
// predict's agreement below never sees a bad argument.
void check_arguments(Trainer& trainer, const float* targets, int64_t rows) {
  const bool last_stage = trainer.parts().stages.count(trainer.parts().lowered.num_stages() - 1) != 0;
  const int microbatches = trainer.config().pipeline.microbatches;
  const std::string rank = std::to_string(trainer.layout().rank);
  std::optional<Error> failure = comm::capture_failure([&] {
    // Any batch of at least one row per micro-batch, cut as a training call's (microbatch_rows.h).
    if (rows < microbatches) {
      throw Error(ErrorCode::kInvalidArgument, "batch of " + std::to_string(rows) + " rows on rank " + rank +
                                                   " is smaller than pipeline.microbatches (" +
                                                   std::to_string(microbatches) + ")");
    }
    if (last_stage && targets == nullptr) {
      throw Error(ErrorCode::kInvalidArgument, "rank " + rank + " holds the last stage but targets is NULL");
    }
    // Non-finite targets: NUMERIC, as sluice_train_step refuses them (the inputs are predict's to check).
    const std::string bad =
        first_non_finite(last_stage ? targets : nullptr, rows, trainer.parts().output_features, "targets");
    if (!bad.empty()) throw Error(ErrorCode::kNumeric, bad + " on rank " + rank);
    if (last_stage && trainer.config().loss == model::LossKind::kCrossEntropy) {
      const std::string problem = first_invalid_class_target(targets, rows, trainer.parts().output_shape);
      if (!problem.empty()) throw Error(ErrorCode::kInvalidArgument, problem + " on rank " + rank);
    }
  });
  comm::agree_or_throw(trainer.parts().mpi->world(), arguments_of("sluice_evaluate"), failure,
                       comm::arrival_deadline());
}

// One micro-batch's loss sum, as the training step's last stage forms it: on a domain (core/runtime/trainer_domain.h)
// per canonical tile, the tiles added in global tile order over the domain group (collective there: every block's
// last stage runs the same micro-batches in the same order), so every block gets the whole samples' sum.
double microbatch_loss(Trainer& trainer, const kernels::Tensor& output, const kernels::Tensor& target, int64_t rows) {
  const RunParts& parts = trainer.parts();
  if (parts.domain) {
    return model::compute_domain_loss(*parts.backend, *parts.domain->domain, trainer.config().loss,
                                      parts.output_shape.front(), output, target, rows)
        .sum;
  }
  return model::compute_loss(*parts.backend, trainer.config().loss, output, target, rows, &parts.custom_loss,
                             config::field_points(parts.output_shape))
      .sum;
}

// This rank's sum of per-sample losses: its micro-batches in order, cut and added as the training step's last
// stage cuts and adds them.
double local_loss_sum(Trainer& trainer, const std::vector<float>& outputs, const float* targets, int64_t rows) {
  if (trainer.parts().stages.count(trainer.parts().lowered.num_stages() - 1) == 0) return 0.0;
  kernels::Backend& backend = *trainer.parts().backend;
  const int microbatches = trainer.config().pipeline.microbatches;
  const int64_t width = trainer.parts().output_features;
  double sum = 0.0;
  for (int m = 0; m < microbatches; ++m) {
    const MicrobatchRows part = microbatch_rows(rows, microbatches, m);
    const int64_t offset = part.first * width;
    kernels::Tensor output = backend.from_host(part.count, width, outputs.data() + offset);
    kernels::Tensor target = backend.from_host(part.count, width, targets + offset);
    sum += microbatch_loss(trainer, output, target, rows);
  }
  return sum;
}

}  // namespace

double evaluate(Trainer& trainer, const float* inputs, const float* targets, int64_t rows) {
  if (!trainer.started()) throw Error(ErrorCode::kState, "trainer is not started");
  check_arguments(trainer, targets, rows);
  // predict fills the outputs on every rank of the replica; only the last stage's ranks have targets to use.
  // In the model's units: the loss compares them with normalized targets, as train_step's does.
  std::vector<float> outputs(static_cast<size_t>(rows * trainer.parts().output_features));
  trainer.predict_model_units(inputs, outputs.data(), rows);
  const bool last_stage = trainer.parts().stages.count(trainer.parts().lowered.num_stages() - 1) != 0;
  const std::vector<float> normalized_targets =
      last_stage ? normalized(targets, rows, trainer.state().normalization.targets()) : std::vector<float>();
  if (!normalized_targets.empty()) targets = normalized_targets.data();
  // A loss: custom callback may fail on the last stage's ranks only: agree before the sum, which waits for all.
  double sum = 0.0;
  std::exception_ptr error;
  try {
    sum = local_loss_sum(trainer, outputs, targets, rows);
  } catch (...) {
    error = std::current_exception();
  }
  comm::agree_or_throw(trainer.parts().mpi->world(), "sluice_evaluate loss", error);
  // On a split every block's last stage holds the whole samples' sum: block 0's alone enters the world sum.
  if (trainer.layout().block != 0) sum = 0.0;
  trainer.parts().mpi->world_group().ordered_sum(&sum, 1);
  return sum / static_cast<double>(rows * trainer.layout().data_parallel);
}

}  // namespace sluice::runtime
