#include "tools/sluice/layer_types.h"

#include <string>

#include "checkpoint/format.h"
#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/config/layer_spec.h"

namespace sluice::tools {

void fill_layer_types(checkpoint::CheckpointSummary& summary) {
  const auto text = summary.attributes.find(checkpoint::kConfigAttribute);
  if (text == summary.attributes.end()) return;
  config::Config cfg;
  try {
    cfg = config::parse_config(text->second);
  } catch (const Error&) {
    return;
  }
  for (checkpoint::LayerSummary& layer : summary.layers) {
    if (layer.layer < 0 || static_cast<size_t>(layer.layer) >= cfg.model.layers.size()) continue;
    const config::LayerSpec& spec = cfg.model.layers[static_cast<size_t>(layer.layer)];
    layer.type = spec.type == config::LayerType::kCustom ? "custom:" + spec.name : config::layer_type_name(spec.type);
  }
}

}  // namespace sluice::tools
