#include "core/runtime/application_state.h"

#include <cstring>
#include <map>
#include <optional>

#include "checkpoint/byte_exchange.h"
#include "checkpoint/format.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/save_layout.h"
#include "core/comm/agreement.h"
#include "core/common/checked_math.h"
#include "core/common/error.h"

namespace sluice::runtime {
namespace {

const char* scope_name(StateScope scope) { return scope == StateScope::kReplicated ? "replicated" : "per-rank"; }

size_t byte_size(const StateArray& array) {
  return static_cast<size_t>(array.count) * checkpoint::data_type_size(array.type);
}

// What must match across ranks, as text that also reads well in a message: "float64[100] replicated",
// "int64 per-rank" (a per-rank array's count is its rank's own).
std::string registration_of(const StateArray& array) {
  std::string text = checkpoint::data_type_name(array.type);
  if (array.scope == StateScope::kReplicated) text += "[" + std::to_string(array.count) + "]";
  return text + " " + scope_name(array.scope);
}

std::string serialize(const std::map<std::string, std::string>& registrations) {
  std::string out;
  for (const auto& [name, what] : registrations) out += name + '\n' + what + '\n';
  return out;
}

std::map<std::string, std::string> deserialize(const std::string& bytes) {
  std::map<std::string, std::string> registrations;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t name_end = bytes.find('\n', at);
    const size_t what_end = bytes.find('\n', name_end + 1);
    registrations[bytes.substr(at, name_end - at)] = bytes.substr(name_end + 1, what_end - name_end - 1);
    at = what_end + 1;
  }
  return registrations;
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// The world size that wrote a file's per-rank arrays: the layout_world attribute (every trainer checkpoint has it),
// else how many rank_R datasets the array has.
int64_t saved_world(const checkpoint::Reader& reader, const std::string& name) {
  // layout_from_attributes refuses a layout_world that is not an integer in its allowed range (save_layout.h).
  if (const std::optional<checkpoint::SaveLayout> layout =
          checkpoint::layout_from_attributes(reader.attributes(), reader.file())) {
    return layout->world;
  }
  const std::string prefix = checkpoint::application_path(name) + "/rank_";
  int64_t count = 0;
  for (const std::string& path : reader.application_paths()) {
    if (path.compare(0, prefix.size(), prefix) == 0) ++count;
  }
  return count;
}

bool has_per_rank_datasets(const checkpoint::Reader& reader, const std::string& name) {
  const std::string prefix = checkpoint::application_path(name) + "/rank_";
  for (const std::string& path : reader.application_paths()) {
    if (path.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

}  // namespace

void ApplicationState::add(const std::string& name, void* data, checkpoint::DataType type, int64_t count,
                           StateScope scope) {
  checkpoint::validate_name(name, "application state name");
  for (const StateArray& array : arrays_) {
    if (array.name == name) {
      throw Error(ErrorCode::kInvalidArgument, "application state '" + name + "' is already registered");
    }
  }
  if (count < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "application state '" + name + "': count is negative (" + std::to_string(count) + ")");
  }
  if (data == nullptr && count > 0) {
    throw Error(ErrorCode::kInvalidArgument, "application state '" + name + "': data is NULL");
  }
  // The array is the caller's memory: a count whose bytes overflow, or exceed what a 64-bit process can address
  // (2^47 bytes of user space), cannot describe it, and a save would copy past its end.
  const std::string what = "application state '" + name + "': count x element size";
  const int64_t bytes =
      checked_mul(count, static_cast<int64_t>(checkpoint::data_type_size(type)), what.c_str());
  if (bytes > (int64_t{1} << 47)) {
    throw Error(ErrorCode::kInvalidArgument, "application state '" + name + "': count " + std::to_string(count) +
                                                 " is " + std::to_string(bytes) +
                                                 " bytes, more than a process can address (2^47)");
  }
  arrays_.push_back({name, data, type, count, scope});
}

void ApplicationState::remove(const std::string& name) {
  for (auto it = arrays_.begin(); it != arrays_.end(); ++it) {
    if (it->name == name) {
      arrays_.erase(it);
      return;
    }
  }
  throw Error(ErrorCode::kInvalidArgument, "application state '" + name + "' is not registered");
}

void check_same_registration(MPI_Comm comm, const ApplicationState* state) {
  std::map<std::string, std::string> mine;
  if (state != nullptr) {
    for (const StateArray& array : state->arrays()) mine[array.name] = registration_of(array);
  }
  const int rank = rank_of(comm);
  std::map<std::string, std::string> root;
  // Inside an agreement, so a rank that times out in the broadcast makes every rank fail alike.
  comm::agree_or_throw(comm, "sharing rank 0's application state registration", comm::capture_failure([&] {
                         root = deserialize(checkpoint::broadcast_bytes(comm, rank == 0 ? serialize(mine) : "", 0));
                       }));
  std::optional<Error> failure = comm::capture_failure([&] {
    const std::string here = "rank " + std::to_string(rank);
    auto refuse = [&](const std::string& detail) {
      throw Error(ErrorCode::kInvalidArgument,
                  "application state registered on " + here + " differs from rank 0's: " + detail +
                      "; every rank must call sluice_register_state with the same names, types and scopes (and "
                      "counts for replicated arrays)");
    };
    for (const auto& [name, what] : root) {
      const auto found = mine.find(name);
      if (found == mine.end()) refuse("'" + name + "' (" + what + ") is registered on rank 0 but not on " + here);
      if (found->second != what) {
        refuse("'" + name + "' is " + what + " on rank 0 but " + found->second + " on " + here);
      }
    }
    for (const auto& [name, what] : mine) {
      if (root.count(name) == 0) refuse("'" + name + "' (" + what + ") is registered on " + here + " but not on rank 0");
    }
  });
  comm::agree_or_throw(comm, "checking the registered application state", failure);
}

void add_application_entries(const ApplicationState* state, int rank, checkpoint::Snapshot& snapshot) {
  if (state == nullptr) return;
  for (const StateArray& array : state->arrays()) {
    if (array.scope == StateScope::kReplicated && rank != 0) continue;
    checkpoint::Entry entry;
    entry.path = array.scope == StateScope::kReplicated ? checkpoint::application_path(array.name)
                                                        : checkpoint::application_path(array.name, rank);
    entry.dims = {array.count};
    entry.type = array.type;
    if (array.type == checkpoint::DataType::kFloat32) {
      entry.data.resize(static_cast<size_t>(array.count));
      if (array.count > 0) std::memcpy(entry.data.data(), array.data, byte_size(array));
    } else {
      entry.bytes.resize(byte_size(array));
      if (array.count > 0) std::memcpy(entry.bytes.data(), array.data, byte_size(array));
    }
    snapshot.entries.push_back(std::move(entry));
  }
}

std::vector<std::vector<unsigned char>> stage_application_state(const checkpoint::Reader& reader,
                                                                const ApplicationState* state, int rank, int world) {
  std::vector<std::vector<unsigned char>> staged;
  if (state == nullptr) return staged;
  for (const StateArray& array : state->arrays()) {
    const std::string where = "checkpoint '" + reader.file() + "', application state '" + array.name + "'";
    const std::string replicated_path = checkpoint::application_path(array.name);
    std::string path = replicated_path;
    if (array.scope == StateScope::kPerRank) {
      path = checkpoint::application_path(array.name, rank);
      if (!reader.contains_application(path) && reader.contains_application(replicated_path)) {
        throw Error(ErrorCode::kCheckpoint, where + ": saved as a replicated array (" + replicated_path +
                                                "), registered now as per-rank");
      }
      if (has_per_rank_datasets(reader, array.name)) {
        const int64_t saved = saved_world(reader, array.name);
        if (saved != world) {
          throw Error(ErrorCode::kCheckpoint,
                      where + ": a per-rank array saved by " + std::to_string(saved) + " ranks cannot be restored on " +
                          std::to_string(world) + "; per-rank state resumes only on the same world size");
        }
      }
    } else if (!reader.contains_application(path) && has_per_rank_datasets(reader, array.name)) {
      throw Error(ErrorCode::kCheckpoint,
                  where + ": saved as a per-rank array (" + path + "/rank_R), registered now as replicated");
    }
    if (!reader.contains_application(path)) {
      throw Error(ErrorCode::kCheckpoint, where + " is missing (no dataset " + path +
                                              "): the checkpoint was written without this array registered");
    }
    staged.emplace_back(byte_size(array));
    reader.read_application(path, array.type, staged.back().data(), static_cast<size_t>(array.count));
  }
  return staged;
}

void restore_application_state(const ApplicationState* state, const std::vector<std::vector<unsigned char>>& staged) {
  if (state == nullptr) return;
  for (size_t i = 0; i < state->arrays().size() && i < staged.size(); ++i) {
    const StateArray& array = state->arrays()[i];
    if (!staged[i].empty()) std::memcpy(array.data, staged[i].data(), staged[i].size());
  }
}

}  // namespace sluice::runtime
