#include "core/runtime/checkpoint_slots.h"

#include <map>
#include <utility>

#include "checkpoint/format.h"
#include "checkpoint/layer_paths.h"
#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// "layers.<i>.<param>" -> <param>; the optimizer's state names append ".<state>" to that.
std::string param_name(const model::Parameter& p) {
  const std::string prefix = "layers." + std::to_string(p.layer_index) + ".";
  const std::string q = p.qualified_name();
  return q.compare(0, prefix.size(), prefix) == 0 ? q.substr(prefix.size()) : p.name;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  return "[" + shape + "]";
}

}  // namespace

bool fits_slot(const std::vector<int64_t>& found, const std::vector<int64_t>& dims, const kernels::Tensor& tensor) {
  return found == dims || found == std::vector<int64_t>{tensor.rows(), tensor.cols()};
}

std::vector<Slot> slots_of(const std::vector<model::Parameter*>& params, model::Optimizer& optimizer) {
  std::vector<Slot> slots;
  std::map<std::string, const model::Parameter*> by_qualified_name;
  for (model::Parameter* p : params) {
    slots.push_back({checkpoint::model_path(p->layer_index, param_name(*p)), &p->value, p->stored_shape()});
    by_qualified_name[p->qualified_name()] = p;
  }
  for (const model::NamedTensor& state : optimizer.state_tensors()) {
    // The state's name is "<qualified parameter name>.<state>"; find the longest parameter prefix.
    const size_t dot = state.name.rfind('.');
    auto it = by_qualified_name.find(state.name.substr(0, dot));
    if (dot == std::string::npos || it == by_qualified_name.end()) {
      throw Error(ErrorCode::kInternal, "optimizer state '" + state.name + "' names no parameter of this rank");
    }
    // The state has its parameter's shape (as PyTorch's optimizer state_dict has it).
    std::vector<int64_t> dims = it->second->stored_shape();
    if (state.tensor->size() != it->second->value.size()) dims = {state.tensor->rows(), state.tensor->cols()};
    slots.push_back({checkpoint::optimizer_path(it->second->layer_index, param_name(*it->second),
                                                state.name.substr(dot + 1)),
                     state.tensor, std::move(dims)});
  }
  return slots;
}

std::vector<Slot> accumulation_slots_of(const std::vector<model::Parameter*>& params, int replica) {
  std::vector<Slot> slots;
  for (model::Parameter* p : params) {
    slots.push_back({checkpoint::accumulation_path(p->layer_index, param_name(*p), replica), &p->grad,
                     p->stored_shape()});
  }
  return slots;
}

void check_compatible(const checkpoint::Reader& reader, const std::vector<Slot>& slots, const config::Config& cfg) {
  const auto it = reader.attributes().find(checkpoint::kOptimizerAttribute);
  const std::string& wanted = config::optimizer_type_name(cfg.optimizer.type);
  if (it != reader.attributes().end() && it->second != wanted) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "' holds " + it->second +
                                            " optimizer state but the config asks for " + wanted);
  }
  for (const Slot& s : slots) {
    const std::vector<int64_t>& found = reader.dims(s.path);
    if (!fits_slot(found, s.dims, *s.tensor)) {
      throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "', dataset " + s.path + ": shape " +
                                              dims_text(found) + " does not match the model's " + dims_text(s.dims));
    }
  }
  const std::vector<int> layers = reader.layer_indices();
  const int num_layers = static_cast<int>(cfg.model.layers.size());
  if (!layers.empty() && layers.back() >= num_layers) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "' has layer " + std::to_string(layers.back()) +
                                            " but the model has only " + std::to_string(num_layers) + " layers");
  }
  reader.train_int(checkpoint::kStepDataset);
  reader.train_int(checkpoint::kOptimizerStepsDataset);
}

}  // namespace sluice::runtime
