// An inference-only model: a training checkpoint loaded whole onto one process and run forward on the CPU, with no
// communicator, optimizer or collective (what a simulation code deploys as its surrogate). The checkpoint may come
// from any layout (stages, replicas, chunks): it is keyed by global layer and holds the run's config text, which
// rebuilds the model through the same builder as the trainer. Predictions cut the batch into micro-batches exactly
// as Trainer::predict does (prediction_passes.h), so on the CPU they equal sluice_predict's bit for bit.
//
// No MPI call is made anywhere here (MPI need not be initialised); the file is opened through checkpoint::Reader
// with HDF5's default (serial) driver. One model may be used by one thread at a time; distinct models are
// independent (the CPU backend is stateless; HDF5 access is the checkpoint reader's to serialise).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/config/config.h"
#include "core/model/builder.h"
#include "core/model/stage_module.h"
#include "core/runtime/normalization_checkpoint.h"

namespace sluice::runtime {

class InferenceModel {
 public:
  // `custom_layers` resolves `{type: custom, name: ...}` in the checkpoint's config, as the trainer's registry does.
  explicit InferenceModel(model::CustomLayerRegistry custom_layers = {});
  ~InferenceModel();

  // Builds the checkpoint's model and reads every /model tensor (checksum-verified). `path` may be a directory (its
  // latest checkpoint). Error(kCheckpoint) naming the file (and dataset) when it cannot be used, kConfig when its
  // config names a custom layer that is not registered. On any error the model keeps what it had loaded before.
  void load(const std::string& path);
  bool loaded() const { return stage_ != nullptr; }

  int64_t input_features() const { return input_features_; }
  int64_t output_features() const { return output_features_; }
  // The config the checkpoint was written with (valid once loaded).
  const config::Config& config() const { return cfg_; }

  // Forward pass (dropout off) of `rows` >= 1 samples: inputs [rows][input_features] -> outputs
  // [rows][output_features]. Error(kState) before load; a custom layer's failing callback throws kCallback.
  // With the checkpoint's normalization statistics (/normalization) the inputs are normalized and the outputs
  // de-normalized exactly as Trainer::predict does.
  void predict(const float* inputs, float* outputs, int64_t rows);

 private:
  model::CustomLayerRegistry custom_layers_;
  config::Config cfg_;
  std::unique_ptr<model::StageModule> stage_;  // the whole model as one stage
  int64_t input_features_ = 0;
  int64_t output_features_ = 0;
  SavedNormalization normalization_;  // the checkpoint's statistics; empty sides are not normalized
};

}  // namespace sluice::runtime
