// What yaml-cpp accepts but a config must not: a map that names one key twice (yaml-cpp keeps both and a lookup
// returns the first, so `steps: 10` ... `steps: 1000` silently trains 10 steps) and a second YAML document after
// `---` (YAML::Load reads only the first, so the rest would be ignored without a word).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace sluice::config {

// Parses `text`, which must hold at most one YAML document. A second document throws
// sluice::Error(kConfig, "<where>: a second YAML document starts at line N ..."). `where` names the source in
// messages ("config file \"a.yaml\"", "--set k=v"). YAML syntax errors propagate as YAML::Exception.
YAML::Node load_one_document(const std::string& text, const std::string& where);

// The most nodes require_unique_keys visits. An aliased node is visited once per alias, so nested aliases (an
// "alias bomb": nine aliases of nine aliases of ...) multiply the walk ninefold per level; a config has a few
// hundred nodes, aliases included.
constexpr long kMaxYamlNodesVisited = 100000;

// Throws sluice::Error(kConfig) naming the key path and both lines when any map under `node` has a key twice,
// and naming kMaxYamlNodesVisited when the walk, aliases expanded, would visit more nodes than that.
// `path` is the dotted path of `node` ("" for the root), `where` as above.
void require_unique_keys(const YAML::Node& node, const std::string& path, const std::string& where);

}  // namespace sluice::config
