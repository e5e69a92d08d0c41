#include "core/config/config_node.h"

#include <cmath>

#include <limits>
#include <utility>

#include "core/common/error.h"
#include "core/common/message_text.h"

namespace sluice::config {

namespace {

bool is_same_or_under(const std::string& path, const std::string& ancestor) {
  return path == ancestor || (path.size() > ancestor.size() && path.compare(0, ancestor.size(), ancestor) == 0 &&
                              path[ancestor.size()] == '.');
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

}  // namespace

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

void OverrideSources::record(const std::string& path, const std::string& assignment) {
  assignment_by_path_[path] = assignment;
}

std::string OverrideSources::locate(const std::string& path, const YAML::Mark& mark) const {
  // A value under an overridden path came from the command line: its mark is meaningless for the file.
  for (const auto& [overridden, assignment] : assignment_by_path_) {
    if (is_same_or_under(path, overridden)) return "(from --set " + assignment + ")";
  }
  if (!mark.is_null()) return "(line " + std::to_string(mark.line + 1) + ")";
  // A node the override walk created (a new map on the way to the overridden key).
  for (const auto& [overridden, assignment] : assignment_by_path_) {
    if (is_same_or_under(overridden, path)) return "(from --set " + assignment + ")";
  }
  return "";
}

ConfigNode::ConfigNode(YAML::Node node, std::string path, const OverrideSources* sources)
    : node_(std::move(node)), path_(std::move(path)), sources_(sources) {}

int ConfigNode::line() const {
  const YAML::Mark mark = node_.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

std::string ConfigNode::location() const {
  std::string location = sources_ ? sources_->locate(path_, node_.Mark()) : "";
  if (location.empty() && !node_.Mark().is_null()) location = "(line " + std::to_string(line()) + ")";
  return location;
}

void ConfigNode::fail(const std::string& problem) const {
  const std::string location = this->location();
  std::string subject = path_.empty() ? std::string("top level") : path_;
  throw Error(ErrorCode::kConfig, "config: " + subject + (location.empty() ? "" : " " + location) + ": " + problem);
}

std::string ConfigNode::describe_value() const {
  if (!node_.IsDefined() || node_.IsNull()) return "nothing";
  if (node_.IsMap()) return "a map";
  if (node_.IsSequence()) return "a sequence";
  return "\"" + shorten_for_message(node_.Scalar()) + "\"";  // a config file's name, mistyped, may be huge
}

bool ConfigNode::has(const std::string& key) const {
  if (!node_.IsMap()) return false;
  const YAML::Node& const_node = node_;  // const lookup: does not insert the key
  return const_node[key].IsDefined();
}

ConfigNode ConfigNode::child(const std::string& key) const {
  if (!node_.IsMap()) fail("expected a map containing \"" + key + "\", got " + describe_value());
  if (!has(key)) fail("missing required key \"" + key + "\"");
  const YAML::Node& const_node = node_;
  return ConfigNode(const_node[key], child_path(path_, key), sources_);
}

std::vector<ConfigNode> ConfigNode::elements() const {
  if (!node_.IsSequence()) fail("expected a sequence, got " + describe_value());
  std::vector<ConfigNode> entries;
  for (std::size_t i = 0; i < node_.size(); ++i) {
    entries.emplace_back(node_[i], child_path(path_, std::to_string(i)), sources_);
  }
  return entries;
}

void ConfigNode::require_map_with_keys(const std::vector<std::string>& allowed, const std::string& what) const {
  if (!node_.IsMap()) fail("expected " + what + " (a map), got " + describe_value());
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    bool known = false;
    for (const std::string& name : allowed) known = known || name == key;
    if (known) continue;
    // Point at the key itself: its line is where the typo is.
    ConfigNode key_node(it->first, child_path(path_, key), sources_);
    key_node.fail("unknown key \"" + key + "\" in " + what + "; allowed keys: " + join_names(allowed));
  }
}

int64_t ConfigNode::as_int() const {
  if (!node_.IsScalar()) fail("expected an integer, got " + describe_value());
  try {
    return node_.as<int64_t>();
  } catch (const YAML::Exception&) {
    fail("expected an integer, got " + describe_value());
  }
}

int ConfigNode::as_int32() const {
  const int64_t value = as_int();
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    fail("integer " + std::to_string(value) + " is out of range");
  }
  return static_cast<int>(value);
}

uint64_t ConfigNode::as_uint64() const {
  if (!node_.IsScalar() || node_.Scalar().rfind('-', 0) == 0) {
    fail("expected a non-negative integer, got " + describe_value());
  }
  try {
    return node_.as<uint64_t>();
  } catch (const YAML::Exception&) {
    fail("expected a non-negative integer, got " + describe_value());
  }
}

double ConfigNode::as_double() const {
  if (!node_.IsScalar()) fail("expected a number, got " + describe_value());
  double value = 0.0;
  try {
    value = node_.as<double>();
  } catch (const YAML::Exception&) {
    fail("expected a number, got " + describe_value());
  }
  // YAML spells NaN and infinity .nan / .inf (also with !!float): no setting means either, and a range check
  // written as `value < high` or `!(value > 0)` would let one through (`eps: .inf`), so every number read is finite.
  if (!std::isfinite(value)) fail("expected a finite number, got " + describe_value());
  return value;
}

bool ConfigNode::as_bool() const {
  if (!node_.IsScalar()) fail("expected true or false, got " + describe_value());
  try {
    return node_.as<bool>();
  } catch (const YAML::Exception&) {
    fail("expected true or false, got " + describe_value());
  }
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a string, got " + describe_value());
  return node_.Scalar();
}

std::vector<int> ConfigNode::as_int_list() const {
  if (!node_.IsSequence()) fail("expected a list of integers, got " + describe_value());
  std::vector<int> values;
  for (const ConfigNode& entry : elements()) values.push_back(entry.as_int32());
  return values;
}

std::string ConfigNode::as_choice(const std::vector<std::string>& choices) const {
  if (!node_.IsScalar()) fail("expected one of " + join_names(choices) + ", got " + describe_value());
  const std::string value = node_.Scalar();
  for (const std::string& choice : choices) {
    if (value == choice) return value;
  }
  fail("expected one of " + join_names(choices) + ", got " + describe_value());
}

}  // namespace sluice::config
