#include "core/config/yaml_overrides.h"

#include <cstddef>
#include <vector>

#include "core/common/error.h"
#include "core/config/yaml_strict.h"

namespace sluice::config {

namespace {

[[noreturn]] void fail(const std::string& assignment, const std::string& problem) {
  throw Error(ErrorCode::kConfig, "config: --set " + assignment + ": " + problem);
}

std::vector<std::string> split_path(const std::string& assignment, const std::string& path) {
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string segment = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (segment.empty()) fail(assignment, "empty key in path \"" + path + "\"");
    segments.push_back(segment);
    if (dot == std::string::npos) return segments;
    start = dot + 1;
  }
}

std::size_t parse_index(const std::string& assignment, const std::string& walked, const std::string& segment,
                        std::size_t size) {
  const bool all_digits =
      !segment.empty() && segment.find_first_not_of("0123456789") == std::string::npos && segment.size() < 10;
  if (!all_digits) {
    fail(assignment, walked + " is a sequence, so the next key must be an index, not \"" + segment + "\"");
  }
  const std::size_t index = std::stoul(segment);
  if (index >= size) {
    fail(assignment, "index " + segment + " is out of range: " + walked + " has " + std::to_string(size) +
                         " entries (indices 0.." + std::to_string(size == 0 ? 0 : size - 1) + ")");
  }
  return index;
}

YAML::Node parse_value(const std::string& assignment, const std::string& path, const std::string& text) {
  // `--set checkpoint.dir=` means "no directory", not YAML null.
  if (text.empty()) return YAML::Node(std::string());
  try {
    // A value is held to the file's rules: `--set 'model={inputs: 3, inputs: 4}'` is refused, not half-read.
    YAML::Node value = load_one_document(text, "--set " + assignment);
    require_unique_keys(value, path, "--set " + assignment);
    return value;
  } catch (const YAML::Exception& error) {
    fail(assignment, "value \"" + text + "\" is not valid YAML: " + error.msg);
  }
}

}  // namespace

std::string apply_override(YAML::Node& root, const std::string& assignment) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string::npos) fail(assignment, "expected key.path=value");
  const std::string path = assignment.substr(0, equals);
  const std::vector<std::string> segments = split_path(assignment, path);
  const YAML::Node value = parse_value(assignment, path, assignment.substr(equals + 1));

  // yaml-cpp nodes are references: `current = x` would overwrite the node `current` points at, so the walk
  // moves with reset() instead.
  YAML::Node current;
  current.reset(root);
  std::string walked;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& segment = segments[i];
    const bool last = i + 1 == segments.size();
    if (current.IsScalar()) {
      fail(assignment, (walked.empty() ? std::string("the document") : walked) + " is a scalar (\"" + current.Scalar() +
                           "\"), it has no key \"" + segment + "\"");
    }
    if (current.IsSequence()) {
      const std::size_t index = parse_index(assignment, walked, segment, current.size());
      if (last) {
        current[index] = value;
        break;
      }
      YAML::Node next = current[index];
      current.reset(next);
    } else {
      // A map, or null (an empty section), which yaml-cpp turns into a map on the first insert.
      if (last) {
        current[segment] = value;
        break;
      }
      YAML::Node next = current[segment];
      if (!next.IsDefined() || next.IsNull()) {
        current[segment] = YAML::Node(YAML::NodeType::Map);
        next.reset(current[segment]);
      }
      current.reset(next);
    }
    walked += (walked.empty() ? "" : ".") + segment;
  }
  return path;
}

}  // namespace sluice::config
