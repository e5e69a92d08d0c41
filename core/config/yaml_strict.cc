#include "core/config/yaml_strict.h"

#include <yaml-cpp/eventhandler.h>

#include <map>
#include <sstream>
#include <vector>

#include "core/common/error.h"
#include "core/common/message_text.h"

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

// Parser events that only note where each document's root node starts (no nodes are built): the line that
// YAML::LoadAll's documents[i].Mark() gave.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> roots;

  void OnDocumentStart(const YAML::Mark&) override { root_pending_ = true; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { note(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { note(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    note(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    note(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(mark);
  }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& mark) {
    if (root_pending_) roots.push_back(mark);
    root_pending_ = false;
  }
  bool root_pending_ = false;
};

}  // namespace

YAML::Node load_one_document(const std::string& text, const std::string& where) {
  // Not YAML::LoadAll: on some malformed text yaml-cpp 0.7's parser keeps reporting new empty documents without
  // moving on, and LoadAll then loops for ever, growing (found by //tests/fuzz:config_parser_fuzzer; reproducer
  // tests/fuzz/corpus/config_parser/loadall_endless_documents.yaml). Asking the parser for at most two
  // documents is all the "one document" rule needs.
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentStarts starts;
  if (!parser.HandleNextDocument(starts)) return YAML::Node();
  if (parser.HandleNextDocument(starts)) {
    fail(where, "a second YAML document starts at line " + line_of(starts.roots.size() > 1 ? starts.roots[1] : YAML::Mark::null_mark()) +
                    " (after \"---\"); a config is one document, and the second would be ignored");
  }
  return YAML::Load(text);
}

namespace {

// require_unique_keys's walk: the path to the node as segments (joined only for a message: a string per visited
// node would be an allocation each, which an alias bomb multiplies) and the nodes seen so far, aliases expanded.
struct KeyWalk {
  const std::string& where;
  std::vector<std::string> path;
  long visited = 0;

  std::string dotted() const {
    std::string text;
    for (const std::string& segment : path) text = child_path(text, segment);
    return text;
  }
};

void walk_unique_keys(const YAML::Node& node, KeyWalk& walk) {
  if (++walk.visited > kMaxYamlNodesVisited) {
    fail(walk.where, "more than " + std::to_string(kMaxYamlNodesVisited) + " YAML nodes once aliases are expanded (at " +
                         (walk.path.empty() ? std::string("the root") : shorten_for_message(walk.dotted())) +
                         "): aliases nested inside aliases multiply; a config needs far fewer");
  }
  if (node.IsSequence()) {
    std::size_t i = 0;
    for (auto it = node.begin(); it != node.end(); ++it, ++i) {
      walk.path.push_back(std::to_string(i));
      walk_unique_keys(*it, walk);
      walk.path.pop_back();
    }
    return;
  }
  if (!node.IsMap()) return;
  // Iterating sees every entry, duplicates included; a lookup by key would only ever see the first.
  std::map<std::string, YAML::Mark> first_seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    walk.path.push_back(it->first.IsScalar() ? it->first.Scalar() : std::string());
    if (it->first.IsScalar()) {
      const auto [seen, inserted] = first_seen.emplace(walk.path.back(), it->first.Mark());
      if (!inserted) {
        fail(walk.where, walk.dotted() + ": duplicate key \"" + walk.path.back() + "\" at line " +
                             line_of(seen->second) + " and line " + line_of(it->first.Mark()) + "; write each key once");
      }
    }
    walk_unique_keys(it->second, walk);
    walk.path.pop_back();
  }
}

}  // namespace

void require_unique_keys(const YAML::Node& node, const std::string& path, const std::string& where) {
  KeyWalk walk{where, {}, 0};
  if (!path.empty()) walk.path.push_back(path);
  walk_unique_keys(node, walk);
}

}  // namespace sluice::config
