#include "core/runtime/trainer_checkpoint.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "checkpoint/directory.h"
#include "checkpoint/format.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/model_export.h"
#include "checkpoint/isolated_read.h"
#include "checkpoint/reader.h"
#include "checkpoint/save.h"
#include "checkpoint/save_layout.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/common/message_text.h"
#include "core/common/version.h"
#include "core/config/config_parser.h"
#include "core/data/field_box.h"
#include "core/comm/agreement.h"
#include "core/runtime/accumulation_restore.h"
#include "core/runtime/checkpoint_slots.h"
#include "core/runtime/loaded_values.h"
#include "core/runtime/normalization_checkpoint.h"
#include "core/runtime/sample_checkpoint.h"

namespace sluice::runtime {
namespace {

// sluice_set_learning_rate's override as /train/lr_override_bits stores it: the double's bits, exact.
int64_t lr_override_bits(double lr) {
  int64_t bits = 0;
  std::memcpy(&bits, &lr, sizeof bits);
  return bits;
}

// The saved override (0: none, also for files written before it existed).
double lr_override_of(const checkpoint::Reader& reader) {
  const auto found = reader.train_ints().find(checkpoint::kLrOverrideBitsDataset);
  if (found == reader.train_ints().end()) return 0.0;
  double lr = 0.0;
  std::memcpy(&lr, &found->second, sizeof lr);
  if (!(lr >= 0.0 && std::isfinite(lr))) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "', dataset /train/" +
                                            checkpoint::kLrOverrideBitsDataset + ": not a learning rate (" +
                                            std::to_string(lr) + ")");
  }
  return lr;
}

// /train/data_position as the trainer keeps it (data_position.h): the running sample count, marked by
// data_position_in_samples = 1. A position still unknown (loaded from an older file, no call since) is written as
// that file had it, the step count without the mark, so a load of this file derives it the same way.
void add_data_position(const TrainerState& state, checkpoint::Snapshot& snapshot) {
  const DataPosition& position = state.data_position;
  const bool known = position.known();
  snapshot.train_ints[checkpoint::kDataPositionDataset] =
      static_cast<int64_t>(known ? position.samples() : state.steps_done);
  if (known) snapshot.train_ints[checkpoint::kDataPositionInSamplesDataset] = 1;
}

struct SavedDataPosition {
  uint64_t samples = 0;
  bool in_samples = false;  // false: an older file's step count, derived at the next call
};

SavedDataPosition data_position_of(const checkpoint::Reader& reader) {
  const auto& ints = reader.train_ints();
  const auto mark = ints.find(checkpoint::kDataPositionInSamplesDataset);
  const auto position = ints.find(checkpoint::kDataPositionDataset);
  if (mark == ints.end() || mark->second != 1 || position == ints.end()) return {};
  return {static_cast<uint64_t>(position->second), true};
}

std::vector<model::Parameter*> local_parameters(const Trainer& trainer) {
  std::vector<model::Parameter*> params;
  for (const auto& [index, stage] : trainer.parts().stages) {
    for (model::Parameter* p : stage->parameters()) params.push_back(p);
  }
  return params;
}

// An exact restart continues the SAME run: same model, seed and data. The pipeline layout, the number of
// micro-batches, the step count and the learning rate may change; these may not, or the restart would
// silently train something else.
void check_same_run(const checkpoint::Reader& reader, const config::Config& now) {
  const auto it = reader.attributes().find(checkpoint::kConfigAttribute);
  if (it == reader.attributes().end()) return;  // written by something other than the trainer: shapes decide
  const config::Config saved = config::parse_config(it->second);
  auto refuse = [&](const std::string& key, const std::string& was, const std::string& is) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + shorten_for_message(reader.file()) + "' was written with " + key + " = " + was +
                                            " but the config now has " + is +
                                            "; a restart must continue the same run (start a new run instead)");
  };
  if (saved.seed != now.seed) refuse("seed", std::to_string(saved.seed), std::to_string(now.seed));
  if (saved.loss != now.loss) refuse("loss", model::loss_kind_name(saved.loss), model::loss_kind_name(now.loss));
  if (saved.data.type != now.data.type) {
    refuse("data.type", config::data_type_name(saved.data.type), config::data_type_name(now.data.type));
  }
  if (saved.data.batch != now.data.batch) {
    refuse("data.batch", std::to_string(saved.data.batch), std::to_string(now.data.batch));
  }
  // The replay buffer's draws depend on its capacity (which samples it still holds): another one is another run.
  if (saved.data.replay_capacity != now.data.replay_capacity) {
    refuse("data.replay.capacity", std::to_string(saved.data.replay_capacity),
           std::to_string(now.data.replay_capacity));
  }
  if (saved.model.inputs != now.model.inputs || saved.model.input_shape != now.model.input_shape) {
    refuse("model.inputs", config::shape_text(config::input_shape_of(saved.model)),
           config::shape_text(config::input_shape_of(now.model)));
  }
  if (saved.model.layers.size() != now.model.layers.size()) {
    refuse("the number of model.layers", std::to_string(saved.model.layers.size()),
           std::to_string(now.model.layers.size()));
  }
  for (size_t i = 0; i < saved.model.layers.size(); ++i) {
    if (saved.model.layers[i] == now.model.layers[i]) continue;
    const auto difference = config::first_difference(saved.model.layers[i], now.model.layers[i]);
    refuse("model.layers." + std::to_string(i) + "." + difference->key, difference->was, difference->is);
  }
}

// Where in an accumulation window the checkpoint was saved: 0 at a step boundary (and for files written before
// gradient accumulation existed, which have no accumulation_position). A window can continue only with the same
// optimizer.accumulate; the replica count may change (accumulation_restore.h).
int accumulation_position_of(const checkpoint::Reader& reader, const Trainer& trainer) {
  const auto& ints = reader.train_ints();
  const auto it = ints.find(checkpoint::kAccumulationPositionDataset);
  if (it == ints.end() || it->second == 0) return 0;
  const int64_t position = it->second;
  const int accumulate = trainer.config().optimizer.accumulate;
  int saved_accumulate = 0;  // unknown without the config attribute
  const auto config_text = reader.attributes().find(checkpoint::kConfigAttribute);
  if (config_text != reader.attributes().end()) {
    saved_accumulate = config::parse_config(config_text->second).optimizer.accumulate;
  }
  const std::string where = "checkpoint '" + shorten_for_message(reader.file()) + "' was saved after call " + std::to_string(position) +
                            " of an accumulation window";
  if (position < 0 || (saved_accumulate != 0 && position >= saved_accumulate)) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + shorten_for_message(reader.file()) + "': /train/" +
                                            checkpoint::kAccumulationPositionDataset + " = " +
                                            std::to_string(position) + " is not a position inside a window");
  }
  if ((saved_accumulate != 0 && saved_accumulate != accumulate) || position >= accumulate) {
    throw Error(ErrorCode::kCheckpoint,
                where + (saved_accumulate != 0 ? " of " + std::to_string(saved_accumulate) + " calls" : std::string()) +
                    " but the config now has optimizer.accumulate = " + std::to_string(accumulate) +
                    "; a restart in the middle of a window must keep optimizer.accumulate (or restart from a "
                    "checkpoint saved at a step boundary)");
  }
  return static_cast<int>(position);
}

// The window's samples per call (all replicas), saved with a position inside it; 0 (any batch) in older files.
int64_t accumulation_call_samples_of(const checkpoint::Reader& reader) {
  const auto found = reader.train_ints().find(checkpoint::kAccumulationCallSamplesDataset);
  return found == reader.train_ints().end() ? 0 : found->second;
}

// Collective: the path must be non-empty and the same on every rank (a checkpoint is one file written or
// read by all ranks together); a mistake on one rank is reported on all of them instead of leaving the
// others waiting in the collective open.
void check_path_everywhere(Trainer& trainer, const std::string& path, const char* what) {
  std::exception_ptr error;
  if (path.empty()) {
    error = std::make_exception_ptr(Error(ErrorCode::kInvalidArgument, std::string(what) + ": checkpoint path is "
                                                                            "NULL or empty on rank " +
                                                                            std::to_string(trainer.layout().rank)));
  }
  comm::agree_or_throw(trainer.parts().mpi->world(), arguments_of(what), error, comm::arrival_deadline());
  const uint64_t h = std::hash<std::string>{}(path);
  const double mine[2] = {static_cast<double>(h >> 32), static_cast<double>(h & 0xffffffffu)};
  const std::vector<double> all = trainer.parts().mpi->world_group().all_gather(mine, 2);
  for (size_t r = 1; r < all.size() / 2; ++r) {
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1]) {
      throw Error(ErrorCode::kInvalidArgument, std::string(what) + ": ranks passed different checkpoint paths "
                                                   "(rank 0 and rank " + std::to_string(r) +
                                                   " differ); every rank must pass the same path");
    }
  }
}

// Collective, after check_path_everywhere: a save into a directory that does not exist is a file-system problem
// (kIo, SLUICE_ERROR_IO as sluice.h documents), not a bad checkpoint; rank 0 looks, every rank agrees.
void check_directory_everywhere(Trainer& trainer, const std::string& path) {
  std::exception_ptr error;
  if (trainer.layout().rank == 0) {
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ignored;
    if (!std::filesystem::is_directory(dir, ignored)) {
      error = std::make_exception_ptr(Error(ErrorCode::kIo, "cannot save checkpoint '" + path + "': directory '" +
                                                                dir.string() + "' does not exist"));
    }
  }
  comm::agree_or_throw(trainer.parts().mpi->world(), "checking the checkpoint's directory", error);
}

// On a pipeline.domain split, where this rank's block of each held sample lies (stage_samples reads just that);
// none otherwise (one block, or no domain: the whole samples).
std::optional<HeldSampleBlock> held_sample_block(const Trainer& trainer) {
  const RunParts& parts = trainer.parts();
  if (trainer.layout().blocks <= 1 || parts.domain == nullptr) return std::nullopt;
  const config::ModelSpec& model = trainer.config().model;
  HeldSampleBlock block;
  block.input_shape = config::input_shape_of(model);
  block.output_shape = config::output_shape(model.layers, block.input_shape);
  block.input_box = parts.domain->box();
  block.output_box = data::scaled_box(block.input_box, block.input_shape, block.output_shape);
  return block;
}

}  // namespace

void save_checkpoint(Trainer& trainer, const std::string& path, const ApplicationState* application,
                     const std::function<void(checkpoint::Snapshot&)>& edit, const char* caller) {
  if (!trainer.started()) throw Error(ErrorCode::kState, "trainer is not started");
  check_path_everywhere(trainer, path, caller);
  check_directory_everywhere(trainer, path);
  check_same_registration(trainer.parts().mpi->world(), application);
  const RunParts& parts = trainer.parts();
  const TrainerState state = trainer.state();
  checkpoint::Snapshot snapshot;
  add_application_entries(application, trainer.layout().rank, snapshot);
  const std::optional<HeldSampleBlock> block = held_sample_block(trainer);
  add_sample_entries(trainer.submitted_samples(), trainer.layout().replica, snapshot, parts.input_shape,
                     parts.output_shape, trainer.config().checkpoint.samples, block ? &*block : nullptr);
  add_normalization_entries(state.normalization, trainer.layout().rank, snapshot);
  // Replicas hold identical state, and so do a stage's domain blocks (finish_domain_step adds every block's partials
  // alike): block 0 of replica 0 alone writes, so every dataset has exactly one writer and the file is the same
  // whatever the split.
  const bool writes_stage = trainer.layout().replica == 0 && trainer.layout().block == 0;
  if (writes_stage) {
    for (const Slot& s : slots_of(local_parameters(trainer), *parts.optimizer)) {
      std::vector<float> host(static_cast<size_t>(s.tensor->size()));
      parts.backend->to_host(*s.tensor, host.data());  // device tensors are copied out, host ones copied
      snapshot.entries.push_back({s.path, s.dims, std::move(host)});
    }
  }
  // In the middle of an accumulation window the partial gradient sums are part of the state. They differ per
  // replica until the window's data-parallel sum, so every replica writes its own, keyed by layer and replica (block
  // 0's: a replica's blocks hold the same sums after each call's finish_domain_step).
  const int position = state.accumulation_position;
  if (position > 0 && trainer.layout().block == 0) {
    for (const Slot& s : accumulation_slots_of(local_parameters(trainer), trainer.layout().replica)) {
      std::vector<float> host(static_cast<size_t>(s.tensor->size()));
      parts.backend->to_host(*s.tensor, host.data());
      snapshot.entries.push_back({s.path, s.dims, std::move(host)});
    }
  }
  const config::Config& cfg = trainer.config();
  snapshot.train_ints[checkpoint::kAccumulationPositionDataset] = position;
  snapshot.train_ints[checkpoint::kAccumulationReplicasDataset] = trainer.layout().data_parallel;
  if (state.accumulation_call_samples > 0) {
    snapshot.train_ints[checkpoint::kAccumulationCallSamplesDataset] = state.accumulation_call_samples;
  }
  snapshot.train_ints[checkpoint::kStepDataset] = static_cast<int64_t>(state.steps_done);
  snapshot.train_ints[checkpoint::kSeedDataset] = static_cast<int64_t>(cfg.seed);
  add_data_position(state, snapshot);
  snapshot.train_ints[checkpoint::kOptimizerStepsDataset] = state.optimizer_steps;
  snapshot.train_ints[checkpoint::kLrOverrideBitsDataset] = lr_override_bits(state.learning_rate_override);
  snapshot.attributes[checkpoint::kConfigAttribute] = cfg.text;
  snapshot.attributes[checkpoint::kCreatedByAttribute] = kSluiceWriter;
  snapshot.attributes[checkpoint::kOptimizerAttribute] = config::optimizer_type_name(cfg.optimizer.type);
  checkpoint::SaveLayout layout;
  layout.stages = trainer.layout().stages;
  layout.data_parallel = trainer.layout().data_parallel;
  layout.chunks = cfg.pipeline.chunks;
  layout.world = trainer.layout().world;
  layout.schedule = config::schedule_setting_name(cfg.pipeline.schedule);
  checkpoint::add_layout_attributes(layout, snapshot.attributes);
  if (edit) edit(snapshot);
  checkpoint::save(parts.mpi->world(), path, snapshot);
}


void load_checkpoint(Trainer& trainer, const std::string& path, const ApplicationState* application, bool verified) {
  if (!trainer.started()) throw Error(ErrorCode::kState, "trainer is not started");
  check_path_everywhere(trainer, path, "sluice_load_checkpoint");
  check_same_registration(trainer.parts().mpi->world(), application);
  MPI_Comm world = trainer.parts().mpi->world();
  std::string file = path;
  if (!verified) {
    // The probe first: a file that crashes libhdf5 must crash it, not this process.
    file = checkpoint::resolve_checkpoint_path(world, path);
    checkpoint::probe_checkpoint(world, file,
                                 trainer.config().checkpoint.isolated_reads);
  }
  checkpoint::Reader reader(world, file);
  if (!verified) checkpoint::verify_all(world, reader.file());

  // Read everything this rank needs into staging buffers, agree that every rank succeeded, and only then
  // overwrite the live state: a failure anywhere leaves every rank's trainer as it was.
  const RunParts& parts = trainer.parts();
  TrainerState state = trainer.state();
  std::vector<Slot> slots = slots_of(local_parameters(trainer), *parts.optimizer);
  std::vector<std::vector<float>> staged(slots.size());
  std::vector<std::vector<unsigned char>> staged_application;
  StagedSamples staged_samples;
  std::exception_ptr error;
  int position = 0;
  double lr_override = 0.0;
  SavedDataPosition data_position;
  SavedNormalization normalization;
  StagedAccumulation sums;
  try {
    checkpoint::refuse_resume_from_export(reader);
    check_same_run(reader, trainer.config());
    check_compatible(reader, slots, trainer.config());
    position = accumulation_position_of(reader, trainer);
    if (position > 0) {
      const auto replicas = static_cast<int>(reader.train_int(checkpoint::kAccumulationReplicasDataset));
      sums = stage_accumulation(reader, local_parameters(trainer), replicas, trainer.layout(), trainer.config());
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      staged[i].resize(static_cast<size_t>(slots[i].tensor->size()));
      reader.read_into(slots[i].path, staged[i].data(), staged[i].size());
      check_loaded_values(reader.file(), slots[i].path, staged[i].data(), staged[i].size());
    }
    staged_application =
        stage_application_state(reader, application, trainer.layout().rank, trainer.layout().world);
    const std::optional<HeldSampleBlock> block = held_sample_block(trainer);
    staged_samples = stage_samples(reader, trainer.submitted_samples(), parts.input_shape, parts.output_shape,
                                   block ? &*block : nullptr);
    lr_override = lr_override_of(reader);
    data_position = data_position_of(reader);
    normalization = read_normalization(reader, parts.input_features, parts.output_features,
                                       state.normalization.input_points(), state.normalization.output_points());
  } catch (...) {
    error = std::current_exception();
  }
  comm::agree_or_throw(trainer.parts().mpi->world(), "checkpoint load of '" + shorten_for_message(reader.file()) + "'", error);

  kernels::Backend& backend = *parts.backend;
  for (size_t i = 0; i < slots.size(); ++i) {
    *slots[i].tensor = backend.from_host(slots[i].tensor->rows(), slots[i].tensor->cols(), staged[i].data());
  }
  for (size_t i = 0; i < sums.grads.size(); ++i) {
    *sums.grads[i] = backend.from_host(sums.grads[i]->rows(), sums.grads[i]->cols(), sums.values[i].data());
  }
  restore_application_state(application, staged_application);
  log_dropped_samples(trainer.config().checkpoint.samples, staged_samples, reader.file(), trainer.layout().rank);
  state.samples = std::move(staged_samples);
  state.accumulation_position = position;  // 0: the trainer starts a fresh window (no partial sums)
  state.accumulation_call_samples = position > 0 ? accumulation_call_samples_of(reader) : 0;
  state.steps_done = static_cast<uint64_t>(reader.train_int(checkpoint::kStepDataset));
  state.optimizer_steps = reader.train_int(checkpoint::kOptimizerStepsDataset);
  state.learning_rate_override = lr_override;
  state.data_position.restore(data_position.samples, data_position.in_samples);
  // The file's statistics win (the saved parameters were trained with them); a side it lacks is as the config
  // says: given statistics, auto still to compute, or none.
  state.normalization.reset();
  state.normalization.set_inputs(std::move(normalization.inputs));
  state.normalization.set_targets(std::move(normalization.targets));
  trainer.restore(std::move(state));
}

std::string save_checkpoint_in_dir(Trainer& trainer, const std::string& dir, int keep,
                                   const ApplicationState* application) {
  std::exception_ptr error;
  if (trainer.layout().rank == 0 && mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    error = std::make_exception_ptr(
        Error(ErrorCode::kIo, "cannot create checkpoint directory '" + shorten_for_message(dir) + "': " + std::strerror(errno)));
  }
  comm::agree_or_throw(trainer.parts().mpi->world(), "creating the checkpoint directory", error);
  const std::string path = dir + "/" + checkpoint::checkpoint_file_name(static_cast<int64_t>(trainer.steps_done()));
  save_checkpoint(trainer, path, application);
  if (trainer.layout().rank == 0) {
    log::info("wrote checkpoint " + path + " (step " + std::to_string(trainer.steps_done()) + ")");
    // The new checkpoint is safely on disk; failing to delete old ones must not fail the run.
    try {
      // RunControl, the only caller, holds the directory's lock: every stale temporary is dead, ours or not.
      checkpoint::rotate(dir, keep, /*writer_id=*/"");
    } catch (const Error& e) {
      log::warning(std::string("could not remove old checkpoints: ") + e.what());
    }
  }
  return path;
}

}  // namespace sluice::runtime
