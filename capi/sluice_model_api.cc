// The extern "C" entry points of the inference-only model (sluice.h, "Inference-only model"): handles <-> a
// runtime::InferenceModel, exceptions -> status codes. Nothing here calls MPI.
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "capi/callback_layer.h"
#include "capi/include/sluice/sluice.h"
#include "capi/sample_shape_out.h"
#include "capi/sized_struct.h"
#include "capi/status.h"
#include "core/runtime/inference_model.h"

struct sluice_model {
  // Held by every call that reads or changes the model: a forward pass stashes each micro-batch in the stage's
  // map, so two threads predicting on one model at once corrupted it (SIGSEGV, issue 28). Concurrent
  // sluice_model_predict calls on one model therefore take turns; distinct models never wait for each other.
  mutable std::mutex use;
  sluice::model::CustomLayerRegistry custom_layers;
  // Rebuilt by each load from the registry as it is then; the live model stays until a load succeeds.
  std::unique_ptr<sluice::runtime::InferenceModel> model;
};

namespace {

using sluice::Error;
using sluice::ErrorCode;

// Live handles, so a destroyed or never-created handle is INVALID_ARGUMENT rather than a crash.
std::mutex g_models_mutex;
std::set<const sluice_model*> g_live_models;

void require(bool ok, const std::string& message) {
  if (!ok) throw Error(ErrorCode::kInvalidArgument, message);
}

void require_live(const sluice_model* m) {
  require(m != nullptr, "model handle is NULL");
  std::lock_guard<std::mutex> lock(g_models_mutex);
  require(g_live_models.count(m) != 0, "model handle is not a live model (already destroyed?)");
}

// A live `m` holds a model; called with m->use held (a load may be replacing it).
void require_loaded(const sluice_model* m) {
  if (!m->model) throw Error(ErrorCode::kState, "no checkpoint loaded: call sluice_model_load_checkpoint first");
}

// The same first size-tagged version sluice_trainer_register_layer accepts.
const sluice::capi::SizedStruct kModelLayerOpsStruct{"sluice_layer_ops", "SLUICE_LAYER_OPS_INIT",
                                                     offsetof(sluice_layer_ops, forward_flops)};

sluice_model* new_model() {
  auto m = std::make_unique<sluice_model>();
  std::lock_guard<std::mutex> lock(g_models_mutex);
  g_live_models.insert(m.get());
  return m.release();
}

void load_into(sluice_model* m, const char* path) {
  require(path != nullptr && path[0] != '\0', "checkpoint path is NULL or empty");
  auto loaded = std::make_unique<sluice::runtime::InferenceModel>(m->custom_layers);
  loaded->load(path);
  m->model = std::move(loaded);
}

}  // namespace

extern "C" {

sluice_status sluice_model_create(sluice_model** out) {
  if (out != nullptr) *out = nullptr;
  return sluice::capi::guarded("sluice_model_create", [&] {
    require(out != nullptr, "out (sluice_model**) is NULL");
    *out = new_model();
  });
}

sluice_status sluice_model_register_layer(sluice_model* m, const char* name, const sluice_layer_ops* caller_ops,
                                          void* user_data) {
  return sluice::capi::guarded("sluice_model_register_layer", [&] {
    require_live(m);
    const std::lock_guard<std::mutex> lock(m->use);
    require(name != nullptr && name[0] != '\0', "layer name is NULL or empty");
    require(caller_ops != nullptr, "ops (sluice_layer_ops*) is NULL");
    const sluice_layer_ops ops = sluice::capi::read_sized(*caller_ops, kModelLayerOpsStruct);
    // Inference calls forward only; the backward callbacks may be absent.
    require(ops.forward != nullptr, std::string("layer '") + name + "': forward callback is NULL");
    require(ops.in_features > 0 && ops.out_features > 0,
            std::string("layer '") + name + "': in_features and out_features must be positive");
    require(ops.num_params >= 0, std::string("layer '") + name + "': num_params is negative");
    // A loaded model computes on the host (sluice_layer_ops.device).
    require(ops.device == 0, std::string("layer '") + name + "': device is " + std::to_string(ops.device) +
                                 "; a sluice_model runs on the host and calls its layers with host arrays "
                                 "(register it with device = 0)");
    require(m->custom_layers.count(name) == 0, std::string("layer '") + name + "' is already registered");
    m->custom_layers[name] = sluice::capi::callback_layer_factory(name, ops, user_data);
  });
}

sluice_status sluice_model_load_checkpoint(sluice_model* m, const char* path) {
  return sluice::capi::guarded("sluice_model_load_checkpoint", [&] {
    require_live(m);
    const std::lock_guard<std::mutex> lock(m->use);
    load_into(m, path);
  });
}

sluice_status sluice_model_load(const char* path, sluice_model** out) {
  if (out != nullptr) *out = nullptr;
  sluice_model* m = nullptr;
  const sluice_status status = sluice::capi::guarded("sluice_model_load", [&] {
    require(out != nullptr, "out (sluice_model**) is NULL");
    m = new_model();
    load_into(m, path);
  });
  if (status != SLUICE_OK) {
    sluice_model_destroy(m);
    return status;
  }
  *out = m;
  return SLUICE_OK;
}

sluice_status sluice_model_features(const sluice_model* m, int64_t* input_features, int64_t* output_features) {
  return sluice::capi::guarded("sluice_model_features", [&] {
    require(input_features != nullptr && output_features != nullptr, "input_features or output_features is NULL");
    require_live(m);
    const std::lock_guard<std::mutex> lock(m->use);
    require_loaded(m);
    *input_features = m->model->input_features();
    *output_features = m->model->output_features();
  });
}

sluice_status sluice_model_input_shape(const sluice_model* m, int64_t* dims, int* rank) {
  return sluice::capi::guarded("sluice_model_input_shape", [&] {
    require(dims != nullptr && rank != nullptr, "dims or rank is NULL");
    require_live(m);
    const std::lock_guard<std::mutex> lock(m->use);
    require_loaded(m);
    sluice::capi::write_sample_shape(sluice::config::input_shape_of(m->model->config().model), dims, rank);
  });
}

sluice_status sluice_model_output_shape(const sluice_model* m, int64_t* dims, int* rank) {
  return sluice::capi::guarded("sluice_model_output_shape", [&] {
    require(dims != nullptr && rank != nullptr, "dims or rank is NULL");
    require_live(m);
    const std::lock_guard<std::mutex> lock(m->use);
    require_loaded(m);
    // A custom layer's width is unknown to the shape rule here: rows of the built model's output width then.
    sluice::capi::write_sample_shape(
        sluice::capi::output_sample_shape(m->model->config().model, m->model->output_features(), {}), dims, rank);
  });
}

sluice_status sluice_model_predict(sluice_model* m, const float* inputs, float* outputs, int64_t batch) {
  return sluice::capi::guarded("sluice_model_predict", [&] {
    require_live(m);
    const std::lock_guard<std::mutex> lock(m->use);
    require_loaded(m);
    require(inputs != nullptr, "inputs is NULL");
    require(outputs != nullptr, "outputs is NULL");
    require(batch >= 1, "batch must be at least 1, got " + std::to_string(batch));
    m->model->predict(inputs, outputs, batch);
  });
}

void sluice_model_destroy(sluice_model* m) {
  if (m == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(g_models_mutex);
    if (g_live_models.erase(m) == 0) return;  // not ours, or destroyed twice: leave it alone
  }
  delete m;
}

}  // extern "C"
