#include "core/config/domain_parser.h"

#include <string>
#include <vector>

#include "core/config/domain_layout.h"

namespace sluice::config {

namespace {

// One positive integer per spatial dimension of the field `input`, as the key `what` (blocks or tile extents).
std::vector<int64_t> per_dimension_list(const ConfigNode& node, const SampleShape& input, const std::string& what) {
  if (!is_field(input)) {
    node.fail("needs a field model: model.inputs is a feature count (" + shape_text(input) +
              "), so there is no spatial dimension to split; give model.inputs as a shape [C, D1[, D2[, D3]]]");
  }
  const size_t dims = input.size() - 1;
  if (!node.is_sequence()) {
    node.fail("expected a list of " + what + ", one per spatial dimension of model.inputs " + shape_text(input) +
              ", got " + node.describe_value());
  }
  const std::vector<ConfigNode> entries = node.elements();
  if (entries.size() != dims) {
    node.fail("expected one entry per spatial dimension of model.inputs " + shape_text(input) + " (" +
              std::to_string(dims) + "), got " + std::to_string(entries.size()));
  }
  std::vector<int64_t> values;
  for (size_t d = 0; d < dims; ++d) {
    const int64_t value = entries[d].as_int();
    if (value <= 0) entries[d].fail("expected a positive number of " + what + ", got " + entries[d].describe_value());
    if (value > input[d + 1]) {
      entries[d].fail(std::to_string(value) + " " + what + " in spatial dimension " + std::to_string(d + 1) +
                      ", but the field has " + std::to_string(input[d + 1]) + " points there");
    }
    values.push_back(value);
  }
  return values;
}

// With a split, every layer must run on a block: the first that cannot is refused at its entry.
void check_layers_split(const ConfigNode& root, const Config& config) {
  const std::vector<SplitLayer> walked = split_layers(config.model.layers, input_shape_of(config.model));
  if (walked.empty() || walked.back().problem.empty()) return;
  const int index = static_cast<int>(walked.size()) - 1;
  std::string blocks;
  for (int b : config.pipeline.domain) blocks += (blocks.empty() ? "" : ", ") + std::to_string(b);
  root.child("model").child("layers").elements()[index].fail(
      layer_label(index, config.model.layers[index]) + " cannot run on a split field (pipeline.domain [" + blocks +
      "]): " + walked.back().problem);
}

}  // namespace

void parse_domain(const ConfigNode& root, Config& config) {
  const SampleShape input = input_shape_of(config.model);
  PipelineSpec& pipeline = config.pipeline;
  if (root.has("pipeline")) {
    const ConfigNode node = root.child("pipeline");
    if (node.has("domain")) {
      for (int64_t blocks : per_dimension_list(node.child("domain"), input, "blocks")) {
        pipeline.domain.push_back(static_cast<int>(blocks));  // at most the extent, which fits
      }
    }
    if (node.has("domain_tile")) {
      const ConfigNode tile = node.child("domain_tile");
      pipeline.domain_tile = per_dimension_list(tile, input, "points");
      const std::string problem = domain_tile_problem(config.model.layers, input, pipeline.domain_tile);
      if (!problem.empty()) tile.fail(problem);
    }
  }
  if (is_field(input) && pipeline.domain_tile.empty()) {
    pipeline.domain_tile = default_domain_tile(config.model.layers, input);
  }
  if (domain_block_count(pipeline.domain) > 1) check_layers_split(root, config);
}

}  // namespace sluice::config
