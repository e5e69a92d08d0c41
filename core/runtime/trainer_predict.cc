// Trainer::predict: a forward-only pass through the training layout for any batch of rows >= 1. The rows are cut
// as prediction_passes() says (the rule the inference-only model follows too, so both agree bit for bit), and
// each pass runs the training schedule's forward order, restricted to its micro-batch count when that is less
// than pipeline.microbatches.
#include <optional>
#include <string>
#include <utility>

#include "core/comm/agreement.h"
#include "core/comm/timeout_as_failure.h"
#include "core/common/error.h"
#include "core/common/non_finite.h"
#include "core/runtime/prediction_passes.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

void Trainer::predict_pass(const float* inputs, float* outputs, int64_t microbatch_rows, int microbatches) {
  StepData data;
  data.inputs = inputs;
  data.rows = microbatch_rows * microbatches;
  data.input_features = parts_.input_features;
  data.target_features = parts_.output_features;
  data.global_batch = data.rows;
  data.seed = cfg_.seed;
  data.step = step_;
  data.training = false;
  StepCounters counters;
  Executor& predictor = parts_.predictor_for(microbatches, cfg_.pipeline.microbatches);
  StepOutcome outcome = comm::timeout_as_failure([&] { return predictor.run(data, counters, false); });
  comm::agree_or_throw(parts_.mpi->world(), "prediction", outcome.error);
  // The last stage's rank has the outputs; broadcast them over the pipeline so every rank can use them.
  const int last_rank = parts_.lowered.stage_to_rank.back();
  if (layout().stage_rank == last_rank) {
    for (int m = 0; m < microbatches; ++m) {
      parts_.backend->to_host(outcome.outputs[m], outputs + m * microbatch_rows * parts_.output_features);
    }
  }
  parts_.mpi->pipeline_group().broadcast(outputs, data.rows * parts_.output_features, last_rank);
}

void Trainer::predict(const float* inputs, float* outputs, int64_t rows) {
  predict_model_units(inputs, outputs, rows);
  denormalize(outputs, rows, normalization_.targets());  // every rank holds the outputs and the statistics
}

void Trainer::predict_model_units(const float* inputs, float* outputs, int64_t rows) {
  if (!started_) throw Error(ErrorCode::kState, "trainer is not started");
  // Outputs are filled on every rank; the batch is agreed (equal everywhere), so every rank cuts it alike.
  check_step_inputs("sluice_predict", inputs, outputs, rows, true, true);
  // Non-finite inputs are refused as a training step refuses them (NUMERIC on every rank, naming the sample), not
  // passed through as outputs that look like predictions. The first stage's ranks read them; all agree.
  const std::string bad =
      first_non_finite(parts_.holds_first_stage() ? inputs : nullptr, rows, parts_.input_features, "inputs");
  comm::agree_or_throw(parts_.mpi->world(), arguments_of("sluice_predict"),
                       bad.empty() ? std::nullopt
                                   : std::optional<Error>(Error(ErrorCode::kNumeric,
                                                                bad + " on rank " + std::to_string(layout().rank))),
                       comm::arrival_deadline());
  // Statistics are the same on every rank (given, agreed auto, or one checkpoint's), so is this refusal.
  normalization_.require_ready("sluice_predict");
  const std::vector<float> normalized_inputs =
      parts_.holds_first_stage() ? normalized(inputs, rows, normalization_.inputs()) : std::vector<float>();
  if (!normalized_inputs.empty()) inputs = normalized_inputs.data();
  int64_t done = 0;
  for (const PredictionPass& pass : prediction_passes(rows, cfg_.pipeline.microbatches)) {
    const float* pass_inputs = inputs != nullptr ? inputs + done * parts_.input_features : nullptr;
    predict_pass(pass_inputs, outputs + done * parts_.output_features, pass.microbatch_rows, pass.microbatches);
    done += pass.rows();
  }
}

}  // namespace sluice::runtime
