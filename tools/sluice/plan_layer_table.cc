#include "tools/sluice/plan_layer_table.h"

#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/model_shape.h"
#include "tools/sluice/plan_declared_layers.h"

namespace sluice::tools {
namespace {

std::string shape_column(const config::SampleShape& shape) {
  if (config::is_field(shape)) return config::shape_text(shape);
  return "[" + std::to_string(shape.empty() ? 0 : shape[0]) + "]";
}

// 1234567 -> "1.23M": a table column stays narrow at any size.
std::string compact(double value) {
  const char* suffixes[] = {"", "K", "M", "G", "T"};
  int s = 0;
  while (value >= 1000.0 && s < 4) {
    value /= 1000.0;
    ++s;
  }
  std::ostringstream text;
  text << std::setprecision(value < 10 && s > 0 ? 3 : 4) << value << suffixes[s];
  return text.str();
}

}  // namespace

void write_layer_table(std::ostream& out, const config::Config& cfg) {
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, declared_layers(cfg.model));
  out << "model: input " << shape_column(config::input_shape_of(cfg.model)) << " per sample\n"
      << std::left << std::setw(7) << "layer" << std::setw(14) << "type" << std::setw(18) << "output shape"
      << std::setw(12) << "params" << std::setw(15) << "forward FLOPs" << "output bytes\n";
  int64_t params = 0;
  double flops = 0.0, bytes = 0.0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const model::LayerShape& s = shapes[i];
    // LayerShape::flops counts forward, input gradient and weight gradient; the forward is a third of them.
    const double forward = s.flops / 3.0;
    const double out_bytes = 4.0 * static_cast<double>(s.out);
    out << std::setw(7) << i << std::setw(14) << config::layer_type_name(cfg.model.layers[i].type) << std::setw(18)
        << shape_column(s.out_shape) << std::setw(12) << s.params << std::setw(15) << compact(forward)
        << compact(out_bytes) << "\n";
    params += s.params;
    flops += forward;
    bytes += out_bytes;
  }
  out << "total: " << params << " parameters (" << compact(4.0 * static_cast<double>(params)) << "B fp32), "
      << compact(flops) << " forward FLOPs and " << compact(bytes) << "B of layer outputs per sample\n\n";
}

}  // namespace sluice::tools
