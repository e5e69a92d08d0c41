// The single-process, non-pipelined run that defines what a pipelined run must reproduce bit for bit:
// the whole model as one stage, each data-parallel replica's micro-batches run one after the other
// (forward then fused backward), replica gradients added in replica order, then the same clipping and
// optimizer step as the Trainer. Used by the fidelity tests and as T_seq in the pipeline benchmark.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/config/config.h"
#include "core/model/builder.h"
#include "core/model/loss.h"
#include "core/model/optimizer.h"
#include "core/model/stage_module.h"
#include "core/runtime/normalization.h"

namespace sluice::runtime {

class SequentialReference {
 public:
  SequentialReference(const config::Config& cfg, int data_parallel, model::CustomLayerRegistry custom_layers = {});

  // One optimizer step over the global batch of `global_rows` rows: replica r owns rows
  // [r*rows/DP, (r+1)*rows/DP) (rows/DP >= M), split into pipeline.microbatches micro-batches as the Trainer
  // splits a call (microbatch_rows.h, uneven when M does not divide rows/DP). Returns the mean loss. Row i of the
  // batch is global sample (samples of the earlier calls) + i, which keys its dropout masks as in the Trainer
  // (runtime::StepData::first_sample, one call per optimizer step: optimizer.accumulate is not modelled here).
  double train_step(const float* inputs, const float* targets, int64_t global_rows);

  std::vector<model::Parameter*> parameters() { return stage_->parameters(); }
  int64_t input_features() const { return stage_->in_features(); }
  int64_t output_features() const { return stage_->out_features(); }
  uint64_t steps_done() const { return step_; }
  // After a checkpoint load: the step count, and (when the file has it) the samples trained on so far. Without
  // set_data_position the next call derives the samples as step x its batch, as the Trainer does for older files.
  void set_steps_done(uint64_t step) {
    step_ = step;
    samples_known_ = false;
  }
  void set_data_position(uint64_t samples) {
    samples_ = samples;
    samples_known_ = true;
  }
  model::Optimizer& optimizer() { return *optimizer_; }
  // The config's normalization, applied as the Trainer applies it (auto: from the first call's samples).
  const Normalization& normalization() const { return normalization_; }

 private:
  config::Config cfg_;
  int data_parallel_;
  std::unique_ptr<model::StageModule> stage_;
  std::unique_ptr<model::Optimizer> optimizer_;
  model::LossKind loss_kind_;
  int64_t output_points_ = 1;  // points per channel of the output (a field's loss reads it; rows: 1)
  uint64_t step_ = 0;
  uint64_t samples_ = 0;  // samples (all replicas) of every earlier call: the dropout index of this call's row 0
  bool samples_known_ = true;
  Normalization normalization_;
};

}  // namespace sluice::runtime
