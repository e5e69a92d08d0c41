#include "core/model/skip_plan.h"

#include <algorithm>
#include <map>

namespace sluice::model {

std::vector<LayerCarry> skip_plan(const std::vector<config::LayerSpec>& layers, const std::vector<int64_t>& main_out) {
  std::map<std::string, size_t> last_reader;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (!layers[i].from.empty()) last_reader[layers[i].from] = i;
  }
  std::vector<LayerCarry> plan(layers.size());
  std::vector<SkipSlot> carried;
  for (size_t i = 0; i < layers.size(); ++i) {
    plan[i].in = carried;
    for (const SkipSlot& slot : carried) {
      const bool read_last_here = layers[i].from == slot.name && last_reader.at(slot.name) == i;
      if (!read_last_here) plan[i].out.push_back(slot);
    }
    const auto reader = last_reader.find(layers[i].name);
    if (layers[i].type != config::LayerType::kCustom && reader != last_reader.end() && reader->second > i) {
      plan[i].out.push_back({layers[i].name, main_out[i]});
      plan[i].keeps_output = true;
    }
    carried = plan[i].out;
  }
  return plan;
}

bool touches(const std::vector<config::LayerSpec>& layers, const std::vector<LayerCarry>& plan, int first, int last,
             const std::string& name) {
  for (int i = first; i < last; ++i) {
    const size_t at = static_cast<size_t>(i);
    if (layers[at].from == name || (plan[at].keeps_output && layers[at].name == name)) return true;
  }
  return false;
}

std::vector<LayerCarry> skip_plan(const std::vector<config::LayerSpec>& layers, const std::vector<int64_t>& main_out,
                                  int first, int last) {
  std::vector<LayerCarry> plan = skip_plan(layers, main_out);
  std::vector<LayerCarry> local = plan;
  const auto passes_over = [&](const SkipSlot& slot) { return !touches(layers, plan, first, last, slot.name); };
  for (int i = first; i < last; ++i) {
    LayerCarry& carry = local[static_cast<size_t>(i)];
    carry.in.erase(std::remove_if(carry.in.begin(), carry.in.end(), passes_over), carry.in.end());
    carry.out.erase(std::remove_if(carry.out.begin(), carry.out.end(), passes_over), carry.out.end());
  }
  return local;
}

int64_t carried_features(const std::vector<SkipSlot>& slots) {
  int64_t total = 0;
  for (const SkipSlot& slot : slots) total += slot.features;
  return total;
}

}  // namespace sluice::model
