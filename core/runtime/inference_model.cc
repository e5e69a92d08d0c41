#include "core/runtime/inference_model.h"

#include <utility>
#include <vector>

#include "checkpoint/directory.h"
#include "checkpoint/format.h"
#include "checkpoint/isolated_read.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/reader.h"
#include "core/common/error.h"
#include "core/common/hdf5_lock.h"
#include "core/common/non_finite.h"
#include "core/config/config_parser.h"
#include "core/model/model_shape.h"
#include "core/runtime/normalization_checkpoint.h"
#include "core/runtime/loaded_values.h"
#include "core/runtime/prediction_passes.h"
#include "kernels/backend_registry.h"

namespace sluice::runtime {
namespace {

// The config the checkpoint's run was written with: without it there is no layer list to build.
config::Config saved_config(const checkpoint::Reader& reader) {
  const auto it = reader.attributes().find(checkpoint::kConfigAttribute);
  if (it == reader.attributes().end()) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "' has no '" +
                                            checkpoint::kConfigAttribute +
                                            "' attribute: it was not written by a Sluice trainer, so its model "
                                            "cannot be rebuilt");
  }
  try {
    return config::parse_config(it->second);
  } catch (const Error& e) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "': its stored config does not parse: " +
                                            e.what());
  }
}

// Reads every parameter of `layers` from /model into host memory first, so a bad dataset leaves nothing half
// loaded (the layers are new anyway; this keeps the live model untouched by a failed load).
void read_parameters(const checkpoint::Reader& reader, std::vector<std::unique_ptr<model::Layer>>& layers,
                     kernels::Backend& backend) {
  for (auto& layer : layers) {
    for (model::Parameter* p : layer->parameters()) {
      const std::string path = checkpoint::model_path(p->layer_index, p->name);
      std::vector<float> host(static_cast<size_t>(p->value.size()));
      if (!reader.contains(path)) {
        throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "', dataset " + path +
                                                ": missing (the stored config's layer " +
                                                std::to_string(p->layer_index) + " has parameter " + p->name + ")");
      }
      // PyTorch's shape (format_version 3) or the 2-D [rows, cols] of versions 1 and 2: the same values in order.
      const std::vector<int64_t>& found = reader.dims(path);
      if (found != p->stored_shape() && found != std::vector<int64_t>{p->value.rows(), p->value.cols()}) {
        throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "', dataset " + path +
                                                ": its shape does not match the stored config's layer " +
                                                std::to_string(p->layer_index));
      }
      reader.read_into(path, host.data(), host.size());
      check_loaded_values(reader.file(), path, host.data(), host.size());
      p->value = backend.from_host(p->value.rows(), p->value.cols(), host.data());
    }
  }
}


}  // namespace

InferenceModel::InferenceModel(model::CustomLayerRegistry custom_layers) : custom_layers_(std::move(custom_layers)) {}

InferenceModel::~InferenceModel() = default;

void InferenceModel::load(const std::string& path) {
  // Inference runs on the CPU whatever devices the training used: the CPU backend is stateless, so distinct
  // models on distinct threads share it safely.
  kernels::Backend& backend = kernels::backend_for({"cpu", 0});
  config::Config cfg;
  std::vector<std::unique_ptr<model::Layer>> layers;
  SavedNormalization normalization;
  // The probe first, outside the HDF5 lock (it may take a while): a separate process reads the whole file, so a
  // file that crashes libhdf5 becomes an error instead of killing the host. No config here: always auto.
  const std::string file = checkpoint::resolve_checkpoint_path(path);
  checkpoint::probe_checkpoint(file, checkpoint::IsolatedReads::kAuto);
  {
    // The process-wide HDF5 lock (core/common/hdf5_lock.h), held until the reader has closed the file: loads of
    // distinct models, and a trainer's saves and loads, take turns inside HDF5.
    const Hdf5Lock hdf5_turn;
    // Serial open (no communicator): HDF5's default driver needs no MPI_Init.
    const checkpoint::Reader reader(file);
    cfg = saved_config(reader);
    layers = model::build_layers(cfg.model, backend, custom_layers_);
    if (layers.empty()) throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "': model has no layers");
    read_parameters(reader, layers, backend);
    // The statistics the run normalized with (none in a file without them, whatever its config says): per feature,
    // or per channel of a field side.
    const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, custom_layers_);
    normalization = read_normalization(reader, layers.front()->in_features(), layers.back()->out_features(),
                                       config::field_points(shapes.front().in_shape),
                                       config::field_points(shapes.back().out_shape));
  }
  const int64_t in = layers.front()->in_features();
  const int64_t out = layers.back()->out_features();
  // The whole model as one stage: the same layer code, fusing and inference-mode forward as a trainer's stages.
  stage_ = std::make_unique<model::StageModule>(backend, 0, std::move(layers));
  cfg_ = std::move(cfg);
  input_features_ = in;
  output_features_ = out;
  normalization_ = std::move(normalization);
}

void InferenceModel::predict(const float* inputs, float* outputs, int64_t rows) {
  if (!loaded()) throw Error(ErrorCode::kState, "no checkpoint loaded");
  if (rows <= 0) throw Error(ErrorCode::kInvalidArgument, "batch must be positive, got " + std::to_string(rows));
  // As the trainer's predict: non-finite inputs are refused, not turned into outputs that look like predictions.
  const std::string bad = first_non_finite(inputs, rows, input_features_, "inputs");
  if (!bad.empty()) throw Error(ErrorCode::kNumeric, bad);
  kernels::Backend& backend = kernels::backend_for({"cpu", 0});
  model::StepInfo info;
  info.seed = cfg_.seed;
  info.training = false;  // dropout is the identity
  // Normalized as Trainer::predict normalizes them (the same function, the same bits).
  const std::vector<float> normalized_inputs = normalized(inputs, rows, normalization_.inputs);
  if (!normalized_inputs.empty()) inputs = normalized_inputs.data();
  int64_t done = 0;
  for (const PredictionPass& pass : prediction_passes(rows, cfg_.pipeline.microbatches)) {
    for (int m = 0; m < pass.microbatches; ++m, done += pass.microbatch_rows) {
      info.first_sample = static_cast<uint64_t>(done);
      kernels::Tensor x = backend.from_host(pass.microbatch_rows, input_features_, inputs + done * input_features_);
      try {
        kernels::Tensor y = stage_->forward(m, std::move(x), info);
        stage_->discard(m);
        backend.to_host(y, outputs + done * output_features_);
      } catch (...) {
        try {
          stage_->discard(m);  // what the failed forward stashed, if anything
        } catch (const Error&) {
        }
        throw;
      }
    }
  }
  denormalize(outputs, rows, normalization_.targets);
}

}  // namespace sluice::runtime
