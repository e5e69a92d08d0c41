// Reader of tests/model/reference/layer_references.txt: each field layer's forward and gradients as PyTorch
// computes them (written once by make_layer_references.py beside this file; the format is in README.md there).
// Header-only, standard library only.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sluice::testing {

struct LayerReferenceCase {
  std::string name;        // unique within the file
  std::string layer_yaml;  // one YAML flow mapping per layer, as a config spells it; several are '\n'-separated
  std::vector<int64_t> input_shape;  // per sample: [C, D1[, D2[, D3]]]
  int64_t batch = 0;
  // x, the parameters (weight, bias, ...), y, dy, dx and <parameter>_grad; flattened in C order, PyTorch's shapes.
  std::map<std::string, std::vector<float>> tensors;
};

namespace layer_reference_detail {

[[noreturn]] inline void fail(const std::string& path, int64_t line, const std::string& what) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": " + what);
}

inline int64_t parse_int(const std::string& token, const std::string& path, int64_t line) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(token.c_str(), &end, 10);
  if (token.empty() || end != token.c_str() + token.size() || errno == ERANGE) {
    fail(path, line, "expected an integer, got '" + token + "'");
  }
  return static_cast<int64_t>(v);
}

inline float parse_float(const std::string& token, const std::string& path, int64_t line) {
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(token.c_str(), &end);  // correctly rounded: '%.9g' round-trips every float
  if (token.empty() || end != token.c_str() + token.size() || errno == ERANGE) {
    fail(path, line, "expected a number, got '" + token + "'");
  }
  return v;
}

inline int64_t count_of(const LayerReferenceCase& c, const std::string& tensor) {
  const auto it = c.tensors.find(tensor);
  return it == c.tensors.end() ? -1 : static_cast<int64_t>(it->second.size());
}

// The checks that need the whole case: the required tensors are there and their counts agree.
inline void check_case(const LayerReferenceCase& c, const std::string& path, int64_t line) {
  const std::string where = "case '" + c.name + "': ";
  if (c.layer_yaml.empty()) fail(path, line, where + "no 'layer' line");
  if (c.input_shape.empty()) fail(path, line, where + "no 'input' line");
  if (c.batch <= 0) fail(path, line, where + "no 'batch' line");
  for (const char* required : {"x", "y", "dy", "dx"}) {
    if (c.tensors.count(required) == 0) fail(path, line, where + "no tensor '" + required + "'");
  }
  int64_t per_sample = 1;
  for (int64_t e : c.input_shape) per_sample *= e;
  if (count_of(c, "x") != c.batch * per_sample) {
    fail(path, line, where + "x has " + std::to_string(count_of(c, "x")) + " values, batch x input is " +
                         std::to_string(c.batch * per_sample));
  }
  if (count_of(c, "dx") != count_of(c, "x")) fail(path, line, where + "dx and x differ in count");
  if (count_of(c, "dy") != count_of(c, "y")) fail(path, line, where + "dy and y differ in count");
  if (count_of(c, "y") % c.batch != 0) fail(path, line, where + "y's count is not a multiple of the batch");
  const std::set<std::string> fixed = {"x", "y", "dy", "dx"};
  const std::string suffix = "_grad";
  for (const auto& [name, values] : c.tensors) {
    if (fixed.count(name) != 0) continue;
    const bool is_grad = name.size() > suffix.size() &&
                         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string partner = is_grad ? name.substr(0, name.size() - suffix.size()) : name + suffix;
    if (count_of(c, partner) < 0) fail(path, line, where + "tensor '" + name + "' has no '" + partner + "'");
    if (count_of(c, partner) != static_cast<int64_t>(values.size())) {
      fail(path, line, where + "tensors '" + name + "' and '" + partner + "' differ in count");
    }
  }
}

}  // namespace layer_reference_detail

// Reads every case of a layer reference file; throws std::runtime_error naming the file and line of the first
// malformed one (an unknown keyword, a tensor whose count does not match its values, a missing 'end', ...).
inline std::vector<LayerReferenceCase> read_layer_references(const std::string& path) {
  using layer_reference_detail::fail;
  using layer_reference_detail::parse_float;
  using layer_reference_detail::parse_int;
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the layer reference file");
  std::vector<LayerReferenceCase> cases;
  std::set<std::string> names;
  LayerReferenceCase current;
  bool open = false;
  int64_t case_line = 0;
  int64_t line_no = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string rest = space == std::string::npos ? std::string() : line.substr(space + 1);
    std::istringstream tokens(rest);
    if (key == "case") {
      if (open) fail(path, line_no, "'case' before the 'end' of case '" + current.name + "'");
      std::string name, extra;
      if (!(tokens >> name) || (tokens >> extra)) fail(path, line_no, "'case' takes one name");
      if (!names.insert(name).second) fail(path, line_no, "case '" + name + "' appears twice");
      current = LayerReferenceCase();
      current.name = name;
      open = true;
      case_line = line_no;
      continue;
    }
    if (!open) fail(path, line_no, "'" + key + "' outside a case");
    if (key == "layer") {
      // A whole model's case (skip_references.txt) lists its layers in order, one 'layer' line each.
      if (rest.size() < 2 || rest.front() != '{' || rest.back() != '}') {
        fail(path, line_no, "'layer' takes a YAML flow mapping {...}");
      }
      current.layer_yaml += (current.layer_yaml.empty() ? "" : "\n") + rest;
    } else if (key == "input") {
      if (!current.input_shape.empty()) fail(path, line_no, "a second 'input' line");
      std::string token;
      while (tokens >> token) {
        const int64_t e = parse_int(token, path, line_no);
        if (e <= 0) fail(path, line_no, "an extent must be positive, got " + token);
        current.input_shape.push_back(e);
      }
      if (current.input_shape.size() < 2 || current.input_shape.size() > 4) {
        fail(path, line_no, "'input' takes 2 to 4 extents: C, D1[, D2[, D3]]");
      }
    } else if (key == "batch") {
      if (current.batch != 0) fail(path, line_no, "a second 'batch' line");
      std::string token, extra;
      if (!(tokens >> token) || (tokens >> extra)) fail(path, line_no, "'batch' takes one integer");
      current.batch = parse_int(token, path, line_no);
      if (current.batch <= 0) fail(path, line_no, "the batch must be positive");
    } else if (key == "tensor") {
      std::string name, count_token, token;
      if (!(tokens >> name >> count_token)) fail(path, line_no, "'tensor' takes a name, a count and the values");
      if (current.tensors.count(name) != 0) fail(path, line_no, "tensor '" + name + "' appears twice");
      const int64_t count = parse_int(count_token, path, line_no);
      if (count < 0) fail(path, line_no, "tensor '" + name + "': negative count");
      std::vector<float> values;
      values.reserve(static_cast<size_t>(count));
      while (tokens >> token) values.push_back(parse_float(token, path, line_no));
      if (static_cast<int64_t>(values.size()) != count) {
        fail(path, line_no, "tensor '" + name + "' declares " + std::to_string(count) + " values and has " +
                                std::to_string(values.size()));
      }
      current.tensors.emplace(name, std::move(values));
    } else if (key == "end") {
      if (!rest.empty()) fail(path, line_no, "'end' takes nothing");
      layer_reference_detail::check_case(current, path, line_no);
      cases.push_back(std::move(current));
      current = LayerReferenceCase();
      open = false;
    } else {
      fail(path, line_no, "unknown keyword '" + key + "'");
    }
  }
  if (open) fail(path, case_line, "case '" + current.name + "' has no 'end'");
  if (cases.empty()) throw std::runtime_error(path + ": no cases");
  return cases;
}

}  // namespace sluice::testing
