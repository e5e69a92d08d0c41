// A read-only view of one YAML node that knows its key path (`model.layers.1.outputs`) and where it came from,
// so every typed read can fail with `config: <path> (line N): <problem>`. The config parser uses nothing else
// to read YAML, which keeps all error wording in one place.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config/choice_table.h"

namespace sluice::config {

// Which key paths were written by `--set` overrides. Values from an override have no line in the user's file
// (yaml-cpp marks them with the override's own text), so errors about them must name the override instead.
class OverrideSources {
 public:
  void record(const std::string& path, const std::string& assignment);

  // "(line 7)", "(from --set pipeline.stages=four)", or "" when neither is known.
  std::string locate(const std::string& path, const YAML::Mark& mark) const;

 private:
  std::map<std::string, std::string> assignment_by_path_;
};

class ConfigNode {
 public:
  ConfigNode(YAML::Node node, std::string path, const OverrideSources* sources);

  const std::string& path() const { return path_; }
  int line() const;  // 1-based; 0 if unknown
  // "(line 7)", "(from --set key=value)" or "": where the value came from, as fail() writes it (for a message
  // that names a second node).
  std::string location() const;

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool has(const std::string& key) const;

  // `key` must be present (error "missing required key").
  ConfigNode child(const std::string& key) const;
  // This node must be a sequence; returns its entries in order.
  std::vector<ConfigNode> elements() const;
  // This node must be a map whose keys are all in `allowed`; `what` names the section in the message
  // (e.g. "pipeline", "a linear layer").
  void require_map_with_keys(const std::vector<std::string>& allowed, const std::string& what) const;

  int64_t as_int() const;
  int as_int32() const;
  uint64_t as_uint64() const;
  double as_double() const;
  bool as_bool() const;
  std::string as_string() const;
  std::vector<int> as_int_list() const;
  // A string that must be one of `choices` (error lists them).
  std::string as_choice(const std::vector<std::string>& choices) const;
  // One of `table`'s names, as its enum value (the error lists the table's names).
  template <typename Enum>
  Enum as_choice(const ChoiceTable<Enum>& table) const {
    return *table.find(as_choice(table.names()));
  }

  // Throws sluice::Error(kConfig, "config: <path> (<location>): <problem>").
  [[noreturn]] void fail(const std::string& problem) const;
  // How the value reads in an error message: the scalar in quotes, or "a map" / "a sequence" / "nothing".
  std::string describe_value() const;

 private:
  YAML::Node node_;
  std::string path_;
  const OverrideSources* sources_;
};

// `a, b, c` for error messages.
std::string join_names(const std::vector<std::string>& names);

}  // namespace sluice::config
