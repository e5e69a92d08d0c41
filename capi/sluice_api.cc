// The extern "C" entry points. Each one checks its arguments, finds the live handle, and forwards to
// runtime::Trainer inside capi::guarded, which turns exceptions into status codes.
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "capi/callback_layer.h"
#include "capi/callback_loss.h"
#include "capi/domain_arguments.h"
#include "capi/sample_shape_out.h"
#include "capi/sized_struct.h"
#include "capi/include/sluice/sluice.h"
#include "capi/status.h"
#include "core/common/log.h"
#include "core/comm/agreement.h"
#include "core/comm/request_wait.h"
#include "core/config/config_parser.h"
#include "core/runtime/application_state.h"
#include "core/runtime/evaluation.h"
#include "core/runtime/layer_params.h"
#include "core/runtime/preemption.h"
#include "core/runtime/submitted_samples.h"
#include "core/runtime/trainer.h"
#include "core/runtime/trainer_checkpoint.h"
#include "core/runtime/trainer_export.h"
#include "core/runtime/training_loop.h"

struct sluice_trainer {
  MPI_Comm comm = MPI_COMM_NULL;            // the host's communicator, handed to the trainer
  MPI_Comm agreement_comm = MPI_COMM_NULL;  // Sluice's duplicate for the create-time agreement
  ~sluice_trainer() { sluice::comm::release_communicator(agreement_comm); }
  sluice::config::Config config;
  sluice::model::CustomLayerRegistry custom_layers;
  std::map<std::string, int64_t> custom_out_features;  // for sluice_trainer_features before start
  std::unique_ptr<sluice::runtime::Trainer> trainer;
  // The library's loop control (periodic checkpoints, resume, agreed preemption stop), the same as `sluice train`'s;
  // the caller's time loop takes the place of run_training. Declared after `trainer`, so it is destroyed first.
  std::unique_ptr<sluice::runtime::RunControl> control;
  // sluice_register_state's arrays; RunControl and the explicit save/load calls borrow it.
  sluice::runtime::ApplicationState application;
  sluice::model::CustomLoss custom_loss;  // sluice_trainer_register_loss (loss: custom)
  std::optional<sluice::runtime::DeclaredDomain> declared_domain;  // sluice_trainer_set_domain
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

// The first size-tagged versions of the public structs: the smallest struct_size accepted (sluice.h, "ABI").
// Fields appended later start at these offsets.
const sluice::capi::SizedStruct kStatsStruct{"sluice_stats", "SLUICE_STATS_INIT", offsetof(sluice_stats, pending_calls)};
const sluice::capi::SizedStruct kLayerOpsStruct{"sluice_layer_ops", "SLUICE_LAYER_OPS_INIT",
                                                offsetof(sluice_layer_ops, forward_flops)};
const sluice::capi::SizedStruct kLayoutStruct{"sluice_layout", "SLUICE_LAYOUT_INIT", sizeof(sluice_layout)};
const sluice::capi::SizedStruct kLossOpsStruct{"sluice_loss_ops", "SLUICE_LOSS_OPS_INIT", sizeof(sluice_loss_ops)};

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
    case SLUICE_ERROR_NUMERIC: return "SLUICE_ERROR_NUMERIC: non-finite value";
  }
  return "SLUICE_ERROR_UNKNOWN: unknown status code";
}

const char* sluice_last_error(void) { return sluice::capi::last_error(); }

sluice_status sluice_report_error(sluice_status status, const char* message) {
  if (status == SLUICE_OK) {
    return sluice::capi::fail(SLUICE_ERROR_INVALID_ARGUMENT,
                              "sluice_report_error: status is SLUICE_OK (pass the error to report)");
  }
  return sluice::capi::fail(status, message != nullptr ? message : "");
}

int sluice_version(void) { return SLUICE_VERSION; }

sluice_status sluice_trainer_create(MPI_Comm comm, const char* config, sluice_trainer** out) {
  if (out != nullptr) *out = nullptr;
  std::unique_ptr<sluice_trainer> t;
  MPI_Comm agreement_comm = MPI_COMM_NULL;
  // Checks that need no communication: without MPI or a communicator there is nobody to agree with.
  const sluice_status usable = sluice::capi::guarded("sluice_trainer_create", [&] {
    require(comm != MPI_COMM_NULL, "communicator is MPI_COMM_NULL");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) throw Error(ErrorCode::kState, "MPI is not initialized: call MPI_Init first");
    // Sluice never sends on the host's communicator: the agreement runs on a duplicate.
    if (MPI_Comm_dup(comm, &agreement_comm) != MPI_SUCCESS) {
      throw Error(ErrorCode::kComm, "MPI_Comm_dup of the communicator failed");
    }
    MPI_Comm_set_errhandler(agreement_comm, MPI_ERRORS_RETURN);
  });
  if (usable != SLUICE_OK) return usable;
  t = std::make_unique<sluice_trainer>();
  t->comm = comm;
  t->agreement_comm = agreement_comm;
  // Collective: a config that fails on some ranks only (a file one node cannot read) fails on all of them,
  // so no rank goes on to sluice_trainer_start and waits for peers that never come.
  const sluice_status status = sluice::capi::guarded("sluice_trainer_create", [&] {
    std::optional<Error> failure = sluice::comm::capture_failure([&] {
      require(out != nullptr, "out (sluice_trainer**) is NULL");
      require(config != nullptr, "config is NULL (pass YAML text or a file path)");
      t->config = sluice::config::parse_config(config);
      // Samples come from sluice_train_step: a data source the API would never read is refused, not ignored.
      if (t->config.data.type != sluice::config::DataType::kExternal) {
        throw Error(ErrorCode::kConfig,
                    "data.type: " + sluice::config::data_type_name(t->config.data.type) +
                        " is read only by `sluice train`; under the C API the samples come from sluice_train_step: "
                        "use data: {type: external, batch: N}");
      }
    });
    sluice::comm::agree_or_throw(t->agreement_comm, "sluice_trainer_create", failure);
  });
  if (status != SLUICE_OK) return status;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_live.insert(t.get());
  *out = t.release();
  return SLUICE_OK;
}

sluice_status sluice_trainer_create_f(MPI_Fint comm, const char* config, sluice_trainer** out) {
  return sluice_trainer_create(MPI_Comm_f2c(comm), config, out);
}

sluice_status sluice_trainer_register_layer(sluice_trainer* t, const char* name, const sluice_layer_ops* caller_ops,
                                            void* user_data) {
  return sluice::capi::guarded("sluice_trainer_register_layer", [&] {
    require_live(t);
    require(name != nullptr && name[0] != '\0', "layer name is NULL or empty");
    require(caller_ops != nullptr, "ops (sluice_layer_ops*) is NULL");
    // From here on a full-size copy: fields past the caller's struct_size read as their defaults.
    const sluice_layer_ops full = sluice::capi::read_sized(*caller_ops, kLayerOpsStruct);
    const sluice_layer_ops* ops = &full;
    require(ops->forward != nullptr, std::string("layer '") + name + "': forward callback is NULL");
    require(ops->backward_input != nullptr || ops->backward != nullptr,
            std::string("layer '") + name + "': backward_input callback is NULL");
    require(ops->backward_input != nullptr, std::string("layer '") + name +
                                                "': backward_input is required (zero-bubble schedules split backward)");
    require(ops->in_features > 0 && ops->out_features > 0,
            std::string("layer '") + name + "': in_features and out_features must be positive");
    require(ops->num_params >= 0, std::string("layer '") + name + "': num_params is negative");
    require(ops->forward_flops >= 0.0 && ops->activation_bytes >= 0.0,
            std::string("layer '") + name + "': forward_flops and activation_bytes must be >= 0 (0: not given)");
    require(ops->device == 0 || ops->device == 1, std::string("layer '") + name + "': device is " +
                                                      std::to_string(ops->device) +
                                                      "; it must be 0 (host arrays) or 1 (CUDA device arrays)");
    require(ops->num_params == 0 || ops->backward_weight != nullptr,
            std::string("layer '") + name + "': has parameters but no backward_weight callback");
    if (t->trainer) throw Error(ErrorCode::kState, "register layers before sluice_trainer_start");
    require(t->custom_layers.count(name) == 0, std::string("layer '") + name + "' is already registered");
    t->custom_layers[name] = sluice::capi::callback_layer_factory(name, *ops, user_data);
    t->custom_out_features[name] = ops->out_features;
  });
}

sluice_status sluice_trainer_register_loss(sluice_trainer* t, const sluice_loss_ops* caller_ops) {
  return sluice::capi::guarded("sluice_trainer_register_loss", [&] {
    require_live(t);
    require(caller_ops != nullptr, "ops (sluice_loss_ops*) is NULL");
    const sluice_loss_ops ops = sluice::capi::read_sized(*caller_ops, kLossOpsStruct);
    require(ops.loss != nullptr, "sluice_loss_ops: the loss callback is NULL");
    if (t->trainer) throw Error(ErrorCode::kState, "register the loss before sluice_trainer_start");
    require(!t->custom_loss, "a loss is already registered (one per trainer)");
    t->custom_loss = sluice::capi::callback_loss(ops);
  });
}

sluice_status sluice_trainer_set_domain(sluice_trainer* t, int ndims, const int64_t* global_extent,
                                        const int64_t* block_offset, const int64_t* block_extent) {
  return sluice::capi::guarded("sluice_trainer_set_domain", [&] {
    require_live(t);
    if (t->trainer) throw Error(ErrorCode::kState, "declare the domain before sluice_trainer_start");
    t->declared_domain =
        sluice::capi::read_declared_domain(t->config, ndims, global_extent, block_offset, block_extent);
  });
}

sluice_status sluice_trainer_start(sluice_trainer* t) {
  return sluice::capi::guarded("sluice_trainer_start", [&] {
    require_live(t);
    if (t->trainer) throw Error(ErrorCode::kState, "trainer is already started");
    auto trainer = std::make_unique<sluice::runtime::Trainer>(t->comm, t->config, t->custom_layers);
    trainer->set_custom_loss(t->custom_loss);
    trainer->start(t->declared_domain);
    t->control = std::make_unique<sluice::runtime::RunControl>(*trainer, nullptr, sluice::runtime::StepLimit::kIfGiven);
    t->control->set_application_state(&t->application);
    t->trainer = std::move(trainer);
  });
}

sluice_status sluice_train_step(sluice_trainer* t, const float* inputs, const float* targets, int64_t batch,
                                float* loss) {
  return sluice::capi::guarded("sluice_train_step", [&] {
    require_started(t);
    // The step count is the same on every rank, so this refusal needs no agreement.
    if (t->control->finished()) {
      throw Error(ErrorCode::kState, "the config's steps: " + std::to_string(t->trainer->config().steps) +
                                         " optimizer steps are done; remove the steps key to train on");
    }
    // batch and NULL pointers are checked inside the trainer, where all ranks agree on the verdict: a check
    // here would return on the faulty rank only and leave the others waiting in the step.
    const sluice::runtime::StepResult r = t->trainer->train_step(inputs, targets, batch);
    if (loss != nullptr) *loss = static_cast<float>(r.loss);
    // checkpoint.every / keep, exactly as under `sluice train` (the stop agreement is sluice_stop_requested's).
    t->control->checkpoint_if_due();
  });
}

// --- Samples from where the solver has them (core/runtime/submitted_samples.h) ------------------------------

sluice_status sluice_submit_samples(sluice_trainer* t, const float* inputs, const float* targets, int64_t count) {
  return sluice::capi::guarded("sluice_submit_samples", [&] {
    require_started(t);
    // count and NULL arrays are checked inside, agreed across ranks (a bad count on one rank must not strand the
    // others in the broadcasts).
    sluice::runtime::submit_samples(*t->trainer, inputs, targets, count);
  });
}

sluice_status sluice_train_submitted(sluice_trainer* t, int64_t batch, float* loss) {
  return sluice::capi::guarded("sluice_train_submitted", [&] {
    require_started(t);
    if (t->control->finished()) {  // the step count is the same on every rank: no agreement needed
      throw Error(ErrorCode::kState, "the config's steps: " + std::to_string(t->trainer->config().steps) +
                                         " optimizer steps are done; remove the steps key to train on");
    }
    const sluice::runtime::StepResult r = sluice::runtime::train_submitted(*t->trainer, batch);
    if (loss != nullptr) *loss = static_cast<float>(r.loss);
    t->control->checkpoint_if_due();
  });
}

sluice_status sluice_submitted_count(const sluice_trainer* t, int64_t* held) {
  return sluice::capi::guarded("sluice_submitted_count", [&] {
    require_started(t);
    require(held != nullptr, "sluice_submitted_count: held (int64_t*) is NULL");
    *held = t->trainer->submitted_samples().held();
  });
}

// --- end of the submitted-samples block ----------------------------------------------------------------------

sluice_status sluice_predict(sluice_trainer* t, const float* inputs, float* outputs, int64_t batch) {
  return sluice::capi::guarded("sluice_predict", [&] {
    require_started(t);
    t->trainer->predict(inputs, outputs, batch);
  });
}

sluice_status sluice_evaluate(sluice_trainer* t, const float* inputs, const float* targets, int64_t batch,
                              float* loss) {
  return sluice::capi::guarded("sluice_evaluate", [&] {
    require_started(t);
    // Arguments are checked inside, agreed across ranks; no RunControl step: nothing is trained or saved.
    const double mean = sluice::runtime::evaluate(*t->trainer, inputs, targets, batch);
    if (loss != nullptr) *loss = static_cast<float>(mean);
  });
}

// --- training controls: learning rate (sluice.h, "training controls") ------------------------------------------

sluice_status sluice_set_learning_rate(sluice_trainer* t, double lr) {
  return sluice::capi::guarded("sluice_set_learning_rate", [&] {
    require_started(t);
    t->trainer->set_learning_rate(lr);  // checked and agreed inside
  });
}

sluice_status sluice_get_learning_rate(const sluice_trainer* t, double* lr) {
  return sluice::capi::guarded("sluice_get_learning_rate", [&] {
    require_started(t);
    require(lr != nullptr, "sluice_get_learning_rate: lr (double*) is NULL");
    *lr = t->trainer->next_learning_rate();
  });
}

// --- end of the learning-rate block ------------------------------------------------------------------------------

// --- training controls: parameters by layer (core/runtime/layer_params.h) --------------------------------------

sluice_status sluice_layer_param_count(const sluice_trainer* t, int layer, int64_t* count) {
  return sluice::capi::guarded("sluice_layer_param_count", [&] {
    require_started(t);
    require(count != nullptr, "sluice_layer_param_count: count (int64_t*) is NULL");
    *count = sluice::runtime::layer_param_count(*t->trainer, layer);
  });
}

sluice_status sluice_get_layer_params(sluice_trainer* t, int layer, float* out, int64_t count) {
  return sluice::capi::guarded("sluice_get_layer_params", [&] {
    require_started(t);
    sluice::runtime::get_layer_params(*t->trainer, layer, out, count);  // checked and agreed inside
  });
}

sluice_status sluice_set_layer_params(sluice_trainer* t, int layer, const float* in, int64_t count) {
  return sluice::capi::guarded("sluice_set_layer_params", [&] {
    require_started(t);
    sluice::runtime::set_layer_params(*t->trainer, layer, in, count);  // checked and agreed inside
  });
}

// --- end of the parameters-by-layer block -----------------------------------------------------------------------

sluice_status sluice_join_with_error(sluice_trainer* t, const char* function, sluice_status status,
                                     const char* message) {
  const std::string name = function != nullptr ? function : "";
  const std::string text = message != nullptr ? message : "";
  return sluice::capi::guarded("sluice_join_with_error", [&] {
    require_live(t);
    require(status != SLUICE_OK, "sluice_join_with_error: status is SLUICE_OK (pass the error to report)");
    const sluice::Error error(sluice::capi::to_error_code(status), text.empty() ? sluice_status_string(status) : text);
    if (!t->trainer) throw error;
    t->trainer->join_with_error(name, error);
  });
}

sluice_status sluice_save_checkpoint(sluice_trainer* t, const char* path) {
  return sluice::capi::guarded("sluice_save_checkpoint", [&] {
    require_started(t);
    // The path is checked inside, agreed across ranks (a NULL on one rank must not strand the others).
    sluice::runtime::save_checkpoint(*t->trainer, path != nullptr ? path : "", &t->application);
  });
}

sluice_status sluice_export_model(sluice_trainer* t, const char* path, int with_application_state) {
  return sluice::capi::guarded("sluice_export_model", [&] {
    require_started(t);
    sluice::runtime::export_model(*t->trainer, path != nullptr ? path : "", &t->application,
                                  with_application_state != 0);
  });
}

sluice_status sluice_load_checkpoint(sluice_trainer* t, const char* path) {
  return sluice::capi::guarded("sluice_load_checkpoint", [&] {
    require_started(t);
    sluice::runtime::load_checkpoint(*t->trainer, path != nullptr ? path : "", &t->application);
  });
}

sluice_status sluice_register_state(sluice_trainer* t, const char* name, void* data, sluice_dtype type, int64_t count,
                                    sluice_state_scope scope) {
  return sluice::capi::guarded("sluice_register_state", [&] {
    require_live(t);
    require(name != nullptr, "sluice_register_state: name is NULL");
    sluice::checkpoint::DataType data_type = sluice::checkpoint::DataType::kFloat32;
    switch (type) {
      case SLUICE_FLOAT32: data_type = sluice::checkpoint::DataType::kFloat32; break;
      case SLUICE_FLOAT64: data_type = sluice::checkpoint::DataType::kFloat64; break;
      case SLUICE_INT32: data_type = sluice::checkpoint::DataType::kInt32; break;
      case SLUICE_INT64: data_type = sluice::checkpoint::DataType::kInt64; break;
      default:
        throw Error(ErrorCode::kInvalidArgument, std::string("application state '") + name + "': type " +
                                                     std::to_string(static_cast<int>(type)) +
                                                     " is not SLUICE_FLOAT32, SLUICE_FLOAT64, SLUICE_INT32 or SLUICE_INT64");
    }
    require(scope == SLUICE_STATE_PER_RANK || scope == SLUICE_STATE_REPLICATED,
            std::string("application state '") + name + "': scope " + std::to_string(static_cast<int>(scope)) +
                " is not SLUICE_STATE_PER_RANK or SLUICE_STATE_REPLICATED");
    t->application.add(name, data, data_type, count,
                       scope == SLUICE_STATE_REPLICATED ? sluice::runtime::StateScope::kReplicated
                                                        : sluice::runtime::StateScope::kPerRank);
  });
}

sluice_status sluice_unregister_state(sluice_trainer* t, const char* name) {
  return sluice::capi::guarded("sluice_unregister_state", [&] {
    require_live(t);
    require(name != nullptr, "sluice_unregister_state: name is NULL");
    t->application.remove(name);
  });
}

sluice_status sluice_trainer_resume(sluice_trainer* t, const char* dir_or_file, int64_t* step) {
  return sluice::capi::guarded("sluice_trainer_resume", [&] {
    require_started(t);
    const std::string& dir = t->trainer->config().checkpoint.dir;
    std::optional<Error> failure = sluice::comm::capture_failure([&] {
      require(step != nullptr, "sluice_trainer_resume: step (int64_t*) is NULL");
      if (dir_or_file == nullptr && dir.empty()) {
        throw Error(ErrorCode::kConfig, "sluice_trainer_resume: dir_or_file is NULL and the config has no "
                                        "checkpoint.dir to resume from");
      }
    });
    sluice::comm::agree_or_throw(t->trainer->parts().mpi->world(),
                                 sluice::runtime::arguments_of("sluice_trainer_resume"), failure,
                                 sluice::comm::arrival_deadline());
    t->control->resume_if_any(dir_or_file != nullptr ? dir_or_file : dir);
    *step = static_cast<int64_t>(t->trainer->steps_done());
  });
}

sluice_status sluice_install_signal_handlers(sluice_trainer* t) {
  return sluice::capi::guarded("sluice_install_signal_handlers", [&] {
    require_live(t);
    sluice::runtime::install_preemption_handlers();
  });
}

sluice_status sluice_stop_requested(sluice_trainer* t, int* stop) {
  return sluice::capi::guarded("sluice_stop_requested", [&] {
    require_started(t);
    std::optional<Error> failure = sluice::comm::capture_failure(
        [&] { require(stop != nullptr, "sluice_stop_requested: stop (int*) is NULL"); });
    sluice::comm::agree_or_throw(t->trainer->parts().mpi->world(),
                                 sluice::runtime::arguments_of("sluice_stop_requested"), failure,
                                 sluice::comm::arrival_deadline());
    *stop = t->control->stop_if_requested().stop ? 1 : 0;
  });
}

sluice_status sluice_trainer_stats(const sluice_trainer* t, sluice_stats* out) {
  return sluice::capi::guarded("sluice_trainer_stats", [&] {
    require_live(t);
    require(out != nullptr, "out (sluice_stats*) is NULL");
    sluice_stats full{};
    if (t->trainer) {
      full.steps = static_cast<int64_t>(t->trainer->steps_done());
      full.last_loss = t->trainer->stats().last.loss;
      full.last_step_seconds = t->trainer->stats().last.seconds;
      full.bubble_fraction = t->trainer->stats().bubble_fraction;
      full.peak_stash_bytes = static_cast<int64_t>(t->trainer->stats().peak_stash_bytes);
      full.pending_calls = t->trainer->state().accumulation_position;
      full.accumulate = t->trainer->config().optimizer.accumulate;
    }
    // Only the bytes the caller's struct has (an older header's struct is shorter).
    sluice::capi::write_sized(full, out, kStatsStruct);
  });
}

namespace {

// A custom layer's output width as registered (before start the trainer has no built model to ask).
sluice::config::CustomWidths registered_widths(const sluice_trainer* t) {
  return [t](const std::string& name, int64_t) {
    auto it = t->custom_out_features.find(name);
    if (it == t->custom_out_features.end()) {
      throw Error(ErrorCode::kConfig, "custom layer '" + name + "' is not registered yet");
    }
    return it->second;
  };
}

}  // namespace

sluice_status sluice_trainer_features(const sluice_trainer* t, int64_t* input_features, int64_t* output_features) {
  return sluice::capi::guarded("sluice_trainer_features", [&] {
    require_live(t);
    require(input_features != nullptr && output_features != nullptr, "output pointer is NULL");
    *input_features = t->config.model.inputs;
    if (t->trainer) {
      // Under pipeline.domain the rank's block is what the calls take and give (the whole sample otherwise).
      if (t->trainer->parts().domain) *input_features = t->trainer->parts().input_features;
      *output_features = t->trainer->parts().output_features;
      return;
    }
    // Before start: the layer list's shape rule, with the widths the custom layers were registered with.
    *output_features = sluice::config::output_features(t->config.model, registered_widths(t));
  });
}

sluice_status sluice_trainer_input_shape(const sluice_trainer* t, int64_t* dims, int* rank) {
  return sluice::capi::guarded("sluice_trainer_input_shape", [&] {
    require_live(t);
    if (t->trainer && t->trainer->parts().domain) {  // started on a domain: the rank's block [C, block extents]
      sluice::capi::write_sample_shape(t->trainer->parts().input_shape, dims, rank);
      return;
    }
    sluice::capi::write_sample_shape(sluice::config::input_shape_of(t->config.model), dims, rank);
  });
}

sluice_status sluice_trainer_output_shape(const sluice_trainer* t, int64_t* dims, int* rank) {
  return sluice::capi::guarded("sluice_trainer_output_shape", [&] {
    require_live(t);
    require(dims != nullptr && rank != nullptr, "dims or rank is NULL");
    if (t->trainer && t->trainer->parts().domain) {  // started on a domain: the rank's block of the output field
      sluice::capi::write_sample_shape(t->trainer->parts().output_shape, dims, rank);
      return;
    }
    const sluice::config::ModelSpec& model = t->config.model;
    const int64_t features = t->trainer ? t->trainer->parts().output_features
                                        : sluice::config::output_features(model, registered_widths(t));
    sluice::capi::write_sample_shape(sluice::capi::output_sample_shape(model, features, registered_widths(t)),
                                     dims, rank);
  });
}

// --- Layout: where this rank sits (local) ---

sluice_status sluice_trainer_layout(const sluice_trainer* t, sluice_layout* out) {
  return sluice::capi::guarded("sluice_trainer_layout", [&] {
    require_started(t);
    require(out != nullptr, "out (sluice_layout*) is NULL");
    const sluice::runtime::Trainer& trainer = *t->trainer;
    const sluice::config::Layout& layout = trainer.layout();
    const int last_stage = trainer.parts().lowered.num_stages() - 1;
    sluice_layout full{};
    full.rank = layout.rank;
    full.stage = layout.stage_rank;
    full.replica = layout.replica;
    full.stages = layout.stages;
    full.replicas = layout.data_parallel;
    full.needs_inputs = trainer.parts().stages.count(0) != 0 ? 1 : 0;
    full.needs_targets = trainer.parts().stages.count(last_stage) != 0 ? 1 : 0;
    full.batch = trainer.config().data.batch / layout.data_parallel;
    full.first_sample = static_cast<int64_t>(layout.replica) * full.batch;
    sluice::capi::write_sized(full, out, kLayoutStruct);
  });
}

sluice_status sluice_trainer_batch_share(const sluice_trainer* t, int64_t global_batch, int64_t* first_sample,
                                         int64_t* count) {
  return sluice::capi::guarded("sluice_trainer_batch_share", [&] {
    require_started(t);
    require(first_sample != nullptr && count != nullptr, "first_sample or count (int64_t*) is NULL");
    const sluice::config::Layout& layout = t->trainer->layout();
    // Equal replica batches of at least one row per micro-batch (a call's batch need not be a multiple of them).
    const int microbatches = t->trainer->config().pipeline.microbatches;
    const int64_t smallest = static_cast<int64_t>(layout.data_parallel) * microbatches;
    require(global_batch >= smallest && global_batch % layout.data_parallel == 0,
            "global_batch " + std::to_string(global_batch) + " does not split into " +
                std::to_string(layout.data_parallel) + " equal replica batches of at least pipeline.microbatches = " +
                std::to_string(microbatches) + " rows (a multiple of " + std::to_string(layout.data_parallel) +
                ", at least " + std::to_string(smallest) + ")");
    *count = global_batch / layout.data_parallel;
    *first_sample = static_cast<int64_t>(layout.replica) * *count;
  });
}

// --- What the library prints (local, process-wide) ---

sluice_status sluice_set_log(sluice_log_fn fn, void* user_data, sluice_log_level max_level) {
  return sluice::capi::guarded("sluice_set_log", [&] {
    require(max_level >= SLUICE_LOG_NONE && max_level <= SLUICE_LOG_DEBUG,
            "max_level " + std::to_string(static_cast<int>(max_level)) +
                " is not a sluice_log_level (SLUICE_LOG_NONE .. SLUICE_LOG_DEBUG)");
    sluice::log::Sink sink;
    if (fn != nullptr) {
      sink = [fn, user_data](sluice::log::Level level, const std::string& text) {
        fn(user_data, static_cast<sluice_log_level>(level), text.c_str());
      };
    }
    sluice::log::configure(std::move(sink), static_cast<int>(max_level));
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
