// The extern "C" entry points. Each one checks its arguments, finds the live handle, and forwards to
// runtime::Trainer inside capi::guarded, which turns exceptions into status codes.
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "capi/callback_layer.h"
#include "capi/include/sluice/sluice.h"
#include "capi/status.h"
#include "core/config/config_parser.h"
#include "core/runtime/trainer.h"
#include "core/runtime/trainer_checkpoint.h"

struct sluice_trainer {
  MPI_Comm comm = MPI_COMM_NULL;
  sluice::config::Config config;
  sluice::model::CustomLayerRegistry custom_layers;
  std::map<std::string, int64_t> custom_out_features;  // for sluice_trainer_features before start
  std::unique_ptr<sluice::runtime::Trainer> trainer;
};

namespace {

using sluice::Error;
using sluice::ErrorCode;

// Live handles. Lets us answer INVALID_ARGUMENT instead of crashing for a handle that was destroyed
// (or never created) — a common mistake in Fortran codes that reuse a c_ptr after cleanup.
std::mutex g_mutex;
std::set<const sluice_trainer*> g_live;

void require(bool ok, const std::string& message) {
  if (!ok) throw Error(ErrorCode::kInvalidArgument, message);
}

void require_live(const sluice_trainer* t) {
  require(t != nullptr, "trainer handle is NULL");
  std::lock_guard<std::mutex> lock(g_mutex);
  require(g_live.count(t) != 0, "trainer handle is not a live trainer (already destroyed?)");
}

void require_started(const sluice_trainer* t) {
  require_live(t);
  if (!t->trainer || !t->trainer->started()) {
    throw Error(ErrorCode::kState, "trainer is not started: call sluice_trainer_start first");
  }
}

}  // namespace

extern "C" {

const char* sluice_status_string(sluice_status status) {
  switch (status) {
    case SLUICE_OK: return "SLUICE_OK: success";
    case SLUICE_ERROR_INVALID_ARGUMENT: return "SLUICE_ERROR_INVALID_ARGUMENT: invalid argument";
    case SLUICE_ERROR_CONFIG: return "SLUICE_ERROR_CONFIG: invalid configuration";
    case SLUICE_ERROR_STATE: return "SLUICE_ERROR_STATE: call out of order";
    case SLUICE_ERROR_UNSUPPORTED: return "SLUICE_ERROR_UNSUPPORTED: not supported by this build";
    case SLUICE_ERROR_COMM: return "SLUICE_ERROR_COMM: communication failure";
    case SLUICE_ERROR_CUDA: return "SLUICE_ERROR_CUDA: CUDA failure";
    case SLUICE_ERROR_IO: return "SLUICE_ERROR_IO: I/O failure";
    case SLUICE_ERROR_CHECKPOINT: return "SLUICE_ERROR_CHECKPOINT: bad checkpoint";
    case SLUICE_ERROR_TIMEOUT: return "SLUICE_ERROR_TIMEOUT: timed out";
    case SLUICE_ERROR_CALLBACK: return "SLUICE_ERROR_CALLBACK: a layer callback failed";
    case SLUICE_ERROR_INTERNAL: return "SLUICE_ERROR_INTERNAL: internal error";
  }
  return "SLUICE_ERROR_UNKNOWN: unknown status code";
}

const char* sluice_last_error(void) { return sluice::capi::last_error(); }

int sluice_version(void) { return SLUICE_VERSION; }

sluice_status sluice_trainer_create(MPI_Comm comm, const char* config, sluice_trainer** out) {
  if (out != nullptr) *out = nullptr;
  std::unique_ptr<sluice_trainer> t;
  const sluice_status local = sluice::capi::guarded("sluice_trainer_create", [&] {
    require(out != nullptr, "out (sluice_trainer**) is NULL");
    require(config != nullptr, "config is NULL (pass YAML text or a file path)");
    require(comm != MPI_COMM_NULL, "communicator is MPI_COMM_NULL");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) throw Error(ErrorCode::kState, "MPI is not initialized: call MPI_Init first");
    t = std::make_unique<sluice_trainer>();
    t->comm = comm;
    t->config = sluice::config::parse_config(config);
  });
  // Collective: a config that fails on some ranks only (a file one node cannot read) fails on all of them,
  // so no rank goes on to sluice_trainer_start and waits for peers that never come.
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized && comm != MPI_COMM_NULL) {
    int failed = local != SLUICE_OK ? 1 : 0, any_failed = 0;
    if (MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, comm) != MPI_SUCCESS) {
      return sluice::capi::fail(SLUICE_ERROR_COMM, "sluice_trainer_create: MPI_Allreduce on the communicator failed");
    }
    if (local == SLUICE_OK && any_failed) {
      return sluice::capi::fail(SLUICE_ERROR_CONFIG,
                                "sluice_trainer_create: failed on another rank (its own error names the cause)");
    }
  }
  if (local != SLUICE_OK) return local;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_live.insert(t.get());
  *out = t.release();
  return SLUICE_OK;
}

sluice_status sluice_trainer_create_f(MPI_Fint comm, const char* config, sluice_trainer** out) {
  return sluice_trainer_create(MPI_Comm_f2c(comm), config, out);
}

sluice_status sluice_trainer_register_layer(sluice_trainer* t, const char* name, const sluice_layer_ops* ops,
                                            void* user_data) {
  return sluice::capi::guarded("sluice_trainer_register_layer", [&] {
    require_live(t);
    require(name != nullptr && name[0] != '\0', "layer name is NULL or empty");
    require(ops != nullptr, "ops (sluice_layer_ops*) is NULL");
    require(ops->forward != nullptr, std::string("layer '") + name + "': forward callback is NULL");
    require(ops->backward_input != nullptr || ops->backward != nullptr,
            std::string("layer '") + name + "': backward_input callback is NULL");
    require(ops->backward_input != nullptr, std::string("layer '") + name +
                                                "': backward_input is required (zero-bubble schedules split backward)");
    require(ops->in_features > 0 && ops->out_features > 0,
            std::string("layer '") + name + "': in_features and out_features must be positive");
    require(ops->num_params >= 0, std::string("layer '") + name + "': num_params is negative");
    require(ops->num_params == 0 || ops->backward_weight != nullptr,
            std::string("layer '") + name + "': has parameters but no backward_weight callback");
    if (t->trainer) throw Error(ErrorCode::kState, "register layers before sluice_trainer_start");
    require(t->custom_layers.count(name) == 0, std::string("layer '") + name + "' is already registered");
    t->custom_layers[name] = sluice::capi::callback_layer_factory(name, *ops, user_data);
    t->custom_out_features[name] = ops->out_features;
  });
}

sluice_status sluice_trainer_start(sluice_trainer* t) {
  return sluice::capi::guarded("sluice_trainer_start", [&] {
    require_live(t);
    if (t->trainer) throw Error(ErrorCode::kState, "trainer is already started");
    auto trainer = std::make_unique<sluice::runtime::Trainer>(t->comm, t->config, t->custom_layers);
    trainer->start();
    t->trainer = std::move(trainer);
  });
}

sluice_status sluice_train_step(sluice_trainer* t, const float* inputs, const float* targets, int64_t batch,
                                float* loss) {
  return sluice::capi::guarded("sluice_train_step", [&] {
    require_started(t);
    // batch and NULL pointers are checked inside the trainer, where all ranks agree on the verdict: a check
    // here would return on the faulty rank only and leave the others waiting in the step.
    const sluice::runtime::StepResult r = t->trainer->train_step(inputs, targets, batch);
    if (loss != nullptr) *loss = static_cast<float>(r.loss);
  });
}

sluice_status sluice_predict(sluice_trainer* t, const float* inputs, float* outputs, int64_t batch) {
  return sluice::capi::guarded("sluice_predict", [&] {
    require_started(t);
    t->trainer->predict(inputs, outputs, batch);
  });
}

sluice_status sluice_save_checkpoint(sluice_trainer* t, const char* path) {
  return sluice::capi::guarded("sluice_save_checkpoint", [&] {
    require_started(t);
    // The path is checked inside, agreed across ranks (a NULL on one rank must not strand the others).
    sluice::runtime::save_checkpoint(*t->trainer, path != nullptr ? path : "");
  });
}

sluice_status sluice_load_checkpoint(sluice_trainer* t, const char* path) {
  return sluice::capi::guarded("sluice_load_checkpoint", [&] {
    require_started(t);
    sluice::runtime::load_checkpoint(*t->trainer, path != nullptr ? path : "");
  });
}

sluice_status sluice_trainer_stats(const sluice_trainer* t, sluice_stats* out) {
  return sluice::capi::guarded("sluice_trainer_stats", [&] {
    require_live(t);
    require(out != nullptr, "out (sluice_stats*) is NULL");
    *out = sluice_stats{};
    if (!t->trainer) return;
    out->steps = static_cast<int64_t>(t->trainer->steps_done());
    out->last_loss = t->trainer->last_loss();
    out->last_step_seconds = t->trainer->last_step_seconds();
    out->bubble_fraction = t->trainer->last_bubble_fraction();
    out->peak_stash_bytes = static_cast<int64_t>(t->trainer->peak_stash_bytes());
  });
}

sluice_status sluice_trainer_features(const sluice_trainer* t, int64_t* input_features, int64_t* output_features) {
  return sluice::capi::guarded("sluice_trainer_features", [&] {
    require_live(t);
    require(input_features != nullptr && output_features != nullptr, "output pointer is NULL");
    *input_features = t->config.model.inputs;
    if (t->trainer) {
      *output_features = t->trainer->output_features();
      return;
    }
    // Before start: the layer list's width rule, with the widths the custom layers were registered with.
    *output_features = sluice::config::output_width(
        t->config.model.layers, t->config.model.inputs, [&](const std::string& name, int64_t) {
          auto it = t->custom_out_features.find(name);
          if (it == t->custom_out_features.end()) {
            throw Error(ErrorCode::kConfig, "custom layer '" + name + "' is not registered yet");
          }
          return it->second;
        });
  });
}

void sluice_trainer_destroy(sluice_trainer* t) {
  if (t == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_live.erase(t) == 0) return;  // not ours, or destroyed twice: ignore rather than crash
  }
  try {
    delete t;
  } catch (...) {
    // Destructors must not throw into the host; nothing more can be done here.
  }
}

}  // extern "C"
