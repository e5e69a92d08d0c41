#include "core/config/yaml_strict.h"

#include <map>
#include <vector>

#include "core/common/error.h"

namespace sluice::config {

namespace {

std::string line_of(const YAML::Mark& mark) {
  return mark.is_null() ? std::string("?") : std::to_string(mark.line + 1);
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

[[noreturn]] void fail(const std::string& where, const std::string& problem) {
  throw Error(ErrorCode::kConfig, "config: " + (where.empty() ? "" : where + ": ") + problem);
}

}  // namespace

YAML::Node load_one_document(const std::string& text, const std::string& where) {
  const std::vector<YAML::Node> documents = YAML::LoadAll(text);
  if (documents.empty()) return YAML::Node();
  if (documents.size() > 1) {
    fail(where, "a second YAML document starts at line " + line_of(documents[1].Mark()) +
                    " (after \"---\"); a config is one document, and the second would be ignored");
  }
  return documents[0];
}

void require_unique_keys(const YAML::Node& node, const std::string& path, const std::string& where) {
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) require_unique_keys(node[i], child_path(path, std::to_string(i)), where);
    return;
  }
  if (!node.IsMap()) return;
  // Iterating sees every entry, duplicates included; a lookup by key would only ever see the first.
  std::map<std::string, YAML::Mark> first_seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string();
    const std::string key_path = child_path(path, key);
    if (it->first.IsScalar()) {
      const auto [seen, inserted] = first_seen.emplace(key, it->first.Mark());
      if (!inserted) {
        fail(where, key_path + ": duplicate key \"" + key + "\" at line " + line_of(seen->second) + " and line " +
                        line_of(it->first.Mark()) + "; write each key once");
      }
    }
    require_unique_keys(it->second, key_path, where);
  }
}

}  // namespace sluice::config
