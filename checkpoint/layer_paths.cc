#include "checkpoint/layer_paths.h"

#include <cstdio>
#include <vector>

#include "checkpoint/format.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

constexpr const char* kLayerPrefix = "layer_";

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

bool is_valid_component(const std::string& component) {
  if (component.empty() || component == "." || component == "..") return false;
  for (char c : component) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

std::vector<std::string> split_absolute(const std::string& path) {
  std::vector<std::string> parts;
  if (path.empty() || path[0] != '/') return parts;
  size_t start = 1;
  while (true) {
    size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

std::optional<int> parse_layer_component(const std::string& component) {
  const std::string prefix = kLayerPrefix;
  if (component.size() <= prefix.size() || component.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const std::string digits = component.substr(prefix.size());
  if (digits.size() > 9) return std::nullopt;  // keeps the value inside int
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

bool is_state_group(const std::string& name) {
  return name == std::string(kModelGroup).substr(1) || name == std::string(kOptimizerGroup).substr(1) ||
         name == std::string(kAccumulationGroup).substr(1);
}

}  // namespace

std::string layer_group_name(int layer) {
  if (layer < 0) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint layer index must be >= 0, got " + std::to_string(layer));
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%s%04d", kLayerPrefix, layer);
  return buffer;
}

std::string model_path(int layer, const std::string& param) {
  validate_name(param, "parameter name");
  std::string path = std::string(kModelGroup) + "/" + layer_group_name(layer) + "/" + param;
  validate_entry_path(path);
  return path;
}

std::string optimizer_path(int layer, const std::string& param, const std::string& state) {
  validate_name(param, "parameter name");
  validate_name(state, "optimizer state name");
  std::string path = std::string(kOptimizerGroup) + "/" + layer_group_name(layer) + "/" + param + "/" + state;
  validate_entry_path(path);
  return path;
}

std::string accumulation_path(int layer, const std::string& param) {
  validate_name(param, "parameter name");
  std::string path = std::string(kAccumulationGroup) + "/" + layer_group_name(layer) + "/" + param;
  validate_entry_path(path);
  return path;
}

std::string accumulation_path(int layer, const std::string& param, int replica) {
  if (replica < 0) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint replica index must be >= 0, got " + std::to_string(replica));
  }
  std::string path = accumulation_path(layer, param) + "/replica_" + std::to_string(replica);
  validate_entry_path(path);
  return path;
}

std::string train_path(const std::string& name) {
  validate_name(name, "train value name");
  return std::string(kTrainGroup) + "/" + name;
}

std::string application_path(const std::string& name) {
  validate_name(name, "application state name");
  return std::string(kApplicationGroup) + "/" + name;
}

std::string application_path(const std::string& name, int rank) {
  if (rank < 0) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint rank index must be >= 0, got " + std::to_string(rank));
  }
  return application_path(name) + "/rank_" + std::to_string(rank);
}

std::string normalization_path(const std::string& name) {
  validate_name(name, "normalization dataset name");
  return std::string(kNormalizationGroup) + "/" + name;
}

std::string samples_path(const std::string& name) {
  validate_name(name, "samples dataset name");
  return std::string(kSamplesGroup) + "/" + name;
}

bool is_application_path(const std::string& path) {
  const std::vector<std::string> parts = split_absolute(path);
  return parts.size() >= 2 && "/" + parts[0] == kApplicationGroup;
}

std::optional<int> layer_index_of(const std::string& path) {
  const std::vector<std::string> parts = split_absolute(path);
  if (parts.size() < 2 || !is_state_group(parts[0])) return std::nullopt;
  return parse_layer_component(parts[1]);
}

namespace {

// Why parts (of a path below /application) do not name /application/<name>[/rank_N]; "" when they do.
std::string application_path_problem(const std::vector<std::string>& parts) {
  if (parts.size() < 2 || parts.size() > 3) return "needs /application/<name> or /application/<name>/rank_N";
  if (parts.size() == 3 && (parts[2].compare(0, 5, "rank_") != 0 || parts[2].size() == 5 ||
                            parts[2].find_first_not_of("0123456789", 5) != std::string::npos)) {
    return "third component must be rank_N (a world rank)";
  }
  return "";
}

// The same for /model, /optimizer and /accumulation paths: /<group>/layer_NNNN/<name>[/...].
std::string state_path_problem(const std::vector<std::string>& parts) {
  if (parts.size() < 3) return "needs at least /<group>/layer_NNNN/<name>";
  if (!is_state_group(parts[0])) return "first component must be model, optimizer or accumulation";
  if (!parse_layer_component(parts[1])) return "second component must be layer_NNNN (a global layer index)";
  return "";
}

}  // namespace

void validate_entry_path(const std::string& path) {
  const std::vector<std::string> parts = split_absolute(path);
  std::string problem;
  if (!parts.empty() && "/" + parts[0] == kApplicationGroup) {
    problem = application_path_problem(parts);
  } else if (!parts.empty() && "/" + parts[0] == kSamplesGroup) {
    if (parts.size() != 2) problem = "needs /samples/<name>";
  } else if (!parts.empty() && "/" + parts[0] == kNormalizationGroup) {
    if (parts.size() != 2) problem = "needs /normalization/<name>";
  } else {
    problem = state_path_problem(parts);
  }
  for (const std::string& part : parts) {
    if (problem.empty() && !is_valid_component(part)) {
      problem = "component '" + part + "' is empty or has characters outside [A-Za-z0-9_.-]";
    }
  }
  if (!problem.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "invalid checkpoint entry path '" + path + "': " + problem);
  }
}

void validate_name(const std::string& name, const std::string& what) {
  if (!is_valid_component(name)) {
    throw Error(ErrorCode::kInvalidArgument,
                "invalid " + what + " '" + name + "': must be non-empty and use only [A-Za-z0-9_.-]");
  }
}

}  // namespace sluice::checkpoint
