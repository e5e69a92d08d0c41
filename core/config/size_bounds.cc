#include "core/config/size_bounds.h"

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::config {

namespace {

// One size of the config and where it was written.
struct Size {
  int64_t value;
  ConfigNode node;
};

// a × b × per_element must fit in int64; otherwise the larger factor's node is blamed.
void require_product_fits(const Size& a, const Size& b, int64_t per_element, const std::string& what) {
  int64_t product = 0;
  const bool overflows = __builtin_mul_overflow(a.value, b.value, &product) ||
                         __builtin_mul_overflow(product, per_element, &product);
  if (!overflows) return;
  const Size& blamed = a.value >= b.value ? a : b;
  blamed.node.fail(std::to_string(a.value) + " (" + a.node.path() + ") × " + std::to_string(b.value) + " (" +
                   b.node.path() + ")" + (per_element > 1 ? " × " + std::to_string(per_element) + " bytes" : "") +
                   " overflows a 64-bit size (" + what + "); use a smaller value");
}

void require_blas_dimension(const Size& width) {
  if (width.value > INT_MAX) {
    width.node.fail(std::to_string(width.value) + " features exceed the largest matrix dimension BLAS takes (" +
                    std::to_string(INT_MAX) + ")");
  }
}

// The feature widths the model's tensors have, in layer order: model.inputs, each linear's outputs and each
// residual_mlp's hidden width. Weights are checked on the way (in × out × 4 bytes). A custom layer's width is
// unknown until it is registered, so the walk stops being able to pair widths there.
std::vector<Size> model_widths(const ConfigNode& root, const Config& config) {
  const ConfigNode model = root.child("model");
  std::vector<Size> widths = {{config.model.inputs, model.child("inputs")}};
  const std::vector<ConfigNode> entries = model.child("layers").elements();
  bool width_known = true;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const LayerSpec& layer = config.model.layers[i];
    const Size in = widths.back();
    if (layer.type == LayerType::kLinear || layer.type == LayerType::kResidualMlp) {
      const bool linear = layer.type == LayerType::kLinear;
      const Size out = {linear ? layer.outputs : layer.hidden, entries[i].child(linear ? "outputs" : "hidden")};
      require_blas_dimension(out);
      if (width_known) require_product_fits(in, out, sizeof(float), "the weight of layer " + std::to_string(i));
      if (linear) width_known = true;
      widths.push_back(out);
      if (!linear) widths.push_back(in);  // a residual block's output keeps its input width
    } else if (layer.type == LayerType::kCustom) {
      width_known = false;
    }
  }
  return widths;
}

}  // namespace

void check_size_bounds(const ConfigNode& root, const Config& config) {
  require_blas_dimension({config.model.inputs, root.child("model").child("inputs")});
  const std::vector<Size> widths = model_widths(root, config);
  // Without data.batch (optional under the C API) each call's batch is checked when it comes: a call whose
  // rows x features cannot be held is refused then (Trainer::train_step, kInvalidArgument naming the bytes).
  if (!root.has("data") || !root.child("data").has("batch")) return;
  const Size batch = {config.data.batch, root.child("data").child("batch")};
  for (const Size& width : widths) {
    require_product_fits(batch, width, sizeof(float), "the [data.batch][" + width.node.path() + "] activations");
  }
  if (root.has("optimizer") && root.child("optimizer").has("accumulate")) {
    const Size accumulate = {config.optimizer.accumulate, root.child("optimizer").child("accumulate")};
    require_product_fits(batch, accumulate, 1, "the samples of one accumulation window");
  }
}

}  // namespace sluice::config
