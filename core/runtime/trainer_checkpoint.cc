#include "core/runtime/trainer_checkpoint.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "checkpoint/directory.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/reader.h"
#include "checkpoint/save.h"
#include "checkpoint/save_layout.h"
#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// A live tensor of this rank together with the dataset that stores it.
struct Slot {
  std::string path;
  kernels::Tensor* tensor;
};

// "layers.<i>.<param>" -> <param>; the optimizer's state names append ".<state>" to that.
std::string param_name(const model::Parameter& p) {
  const std::string prefix = "layers." + std::to_string(p.layer_index) + ".";
  const std::string q = p.qualified_name();
  return q.compare(0, prefix.size(), prefix) == 0 ? q.substr(prefix.size()) : p.name;
}

std::vector<Slot> slots_of(const std::vector<model::Parameter*>& params, model::Optimizer& optimizer) {
  std::vector<Slot> slots;
  std::map<std::string, const model::Parameter*> by_qualified_name;
  for (model::Parameter* p : params) {
    slots.push_back({checkpoint::model_path(p->layer_index, param_name(*p)), &p->value});
    by_qualified_name[p->qualified_name()] = p;
  }
  for (const model::NamedTensor& state : optimizer.state_tensors()) {
    // The state's name is "<qualified parameter name>.<state>"; find the longest parameter prefix.
    const size_t dot = state.name.rfind('.');
    auto it = by_qualified_name.find(state.name.substr(0, dot));
    if (dot == std::string::npos || it == by_qualified_name.end()) {
      throw Error(ErrorCode::kInternal, "optimizer state '" + state.name + "' names no parameter of this rank");
    }
    slots.push_back({checkpoint::optimizer_path(it->second->layer_index, param_name(*it->second),
                                                state.name.substr(dot + 1)),
                     state.tensor});
  }
  return slots;
}

std::vector<model::Parameter*> local_parameters(Trainer& trainer) {
  std::vector<model::Parameter*> params;
  for (const auto& [index, stage] : trainer.stages()) {
    for (model::Parameter* p : stage->parameters()) params.push_back(p);
  }
  return params;
}

// Checks that `reader` holds every slot with the right shape and the right kind of optimizer state.
void check_compatible(const checkpoint::Reader& reader, const std::vector<Slot>& slots, const config::Config& cfg) {
  const auto it = reader.attributes().find("optimizer");
  if (it != reader.attributes().end() && it->second != cfg.optimizer.type) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "' holds " + it->second +
                                            " optimizer state but the config asks for " + cfg.optimizer.type);
  }
  for (const Slot& s : slots) {
    const std::vector<int64_t> expected{s.tensor->rows(), s.tensor->cols()};
    const std::vector<int64_t>& found = reader.dims(s.path);
    if (found != expected) {
      std::string shape;
      for (int64_t d : found) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "', dataset " + s.path + ": shape [" +
                                              shape + "] does not match the model's [" + std::to_string(expected[0]) +
                                              ", " + std::to_string(expected[1]) + "]");
    }
  }
  const std::vector<int> layers = reader.layer_indices();
  const int num_layers = static_cast<int>(cfg.model.layers.size());
  if (!layers.empty() && layers.back() >= num_layers) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "' has layer " + std::to_string(layers.back()) +
                                            " but the model has only " + std::to_string(num_layers) + " layers");
  }
  reader.train_int("step");
  reader.train_int("optimizer_steps");
}

void agree(Trainer& trainer, const std::exception_ptr& error, const char* what) {
  const bool any = trainer.mpi().world_group().any(static_cast<bool>(error));
  if (error) std::rethrow_exception(error);
  if (any) throw Error(ErrorCode::kCheckpoint, std::string(what) + " failed on another rank (see its error)");
}

}  // namespace

void save_checkpoint(Trainer& trainer, const std::string& path) {
  if (!trainer.started()) throw Error(ErrorCode::kState, "trainer is not started");
  checkpoint::Snapshot snapshot;
  // Replicas hold identical state; replica 0 alone writes, so every dataset has exactly one writer.
  if (trainer.layout().replica == 0) {
    for (const Slot& s : slots_of(local_parameters(trainer), trainer.optimizer())) {
      std::vector<float> host(static_cast<size_t>(s.tensor->size()));
      trainer.backend().to_host(*s.tensor, host.data());  // device tensors are copied out, host ones copied
      snapshot.entries.push_back({s.path, {s.tensor->rows(), s.tensor->cols()}, std::move(host)});
    }
  }
  const config::Config& cfg = trainer.config();
  snapshot.train_ints["step"] = static_cast<int64_t>(trainer.steps_done());
  snapshot.train_ints["seed"] = static_cast<int64_t>(cfg.seed);
  snapshot.train_ints["data_position"] = static_cast<int64_t>(trainer.steps_done());
  snapshot.train_ints["optimizer_steps"] = trainer.optimizer().step_count();
  snapshot.attributes["config"] = cfg.text;
  snapshot.attributes["created_by"] = "sluice 0.1.0";
  snapshot.attributes["optimizer"] = cfg.optimizer.type;
  checkpoint::SaveLayout layout;
  layout.stages = trainer.layout().stages;
  layout.data_parallel = trainer.layout().data_parallel;
  layout.chunks = cfg.pipeline.chunks;
  layout.world = trainer.layout().world;
  layout.schedule = cfg.pipeline.schedule;
  checkpoint::add_layout_attributes(layout, snapshot.attributes);
  checkpoint::save(trainer.mpi().world(), path, snapshot);
}

void load_checkpoint(Trainer& trainer, const std::string& path) {
  if (!trainer.started()) throw Error(ErrorCode::kState, "trainer is not started");
  MPI_Comm world = trainer.mpi().world();
  checkpoint::Reader reader(world, path);
  checkpoint::verify_all(world, reader.file());

  // Check everything this rank will read before overwriting anything, then agree, then read.
  std::vector<Slot> slots = slots_of(local_parameters(trainer), trainer.optimizer());
  std::exception_ptr error;
  try {
    check_compatible(reader, slots, trainer.config());
  } catch (...) {
    error = std::current_exception();
  }
  agree(trainer, error, "checkpoint check");

  kernels::Backend& backend = trainer.backend();
  for (const Slot& s : slots) {
    std::vector<float> host(static_cast<size_t>(s.tensor->size()));
    reader.read_into(s.path, host.data(), host.size());
    *s.tensor = backend.from_host(s.tensor->rows(), s.tensor->cols(), host.data());
  }
  trainer.set_steps_done(static_cast<uint64_t>(reader.train_int("step")));
  trainer.optimizer().set_step_count(reader.train_int("optimizer_steps"));
}

void load_checkpoint(SequentialReference& reference, const config::Config& cfg, const std::string& path) {
  checkpoint::Reader reader(path);
  reader.verify_all();
  const std::vector<Slot> slots = slots_of(reference.parameters(), reference.optimizer());
  check_compatible(reader, slots, cfg);
  for (const Slot& s : slots) reader.read_into(s.path, s.tensor->data(), static_cast<size_t>(s.tensor->size()));
  reference.set_steps_done(static_cast<uint64_t>(reader.train_int("step")));
  reference.optimizer().set_step_count(reader.train_int("optimizer_steps"));
}

std::string save_checkpoint_in_dir(Trainer& trainer, const std::string& dir, int keep) {
  if (trainer.layout().rank == 0 && mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    throw Error(ErrorCode::kIo, "cannot create checkpoint directory '" + dir + "': " + std::strerror(errno));
  }
  const std::string path = dir + "/" + checkpoint::checkpoint_file_name(static_cast<int64_t>(trainer.steps_done()));
  save_checkpoint(trainer, path);  // collective: its first step synchronizes after rank 0's mkdir
  if (trainer.layout().rank == 0) checkpoint::rotate(dir, keep);
  return path;
}

}  // namespace sluice::runtime
