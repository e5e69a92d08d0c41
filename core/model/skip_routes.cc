#include "core/model/skip_routes.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "core/model/skip_plan.h"

namespace sluice::model {
namespace {

int stage_of(const std::vector<LayerRange>& ranges, int layer) {
  for (size_t s = 0; s < ranges.size(); ++s)
    if (layer >= ranges[s].first && layer < ranges[s].last) return static_cast<int>(s);
  return -1;
}

// Per skip tensor (by name): the stages that touch it, in order.
std::map<std::string, std::set<int>> touching_stages(const std::vector<config::LayerSpec>& layers,
                                                     const std::vector<LayerCarry>& plan,
                                                     const std::vector<LayerRange>& ranges) {
  std::map<std::string, std::set<int>> touching;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (plan[i].keeps_output) touching[layers[i].name].insert(stage_of(ranges, static_cast<int>(i)));
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto found = touching.find(layers[i].from);
    if (!layers[i].from.empty() && found != touching.end()) found->second.insert(stage_of(ranges, static_cast<int>(i)));
  }
  return touching;
}

// The (from, to) of the route that carries skip `touching` across boundary s, or none.
std::pair<int, int> route_across(const std::set<int>& touching, int s) {
  int from = -1;
  for (int stage : touching) {
    if (stage <= s) {
      from = stage;
    } else {
      return from >= 0 && stage > from + 1 ? std::make_pair(from, stage) : std::make_pair(-1, -1);
    }
  }
  return {-1, -1};
}

}  // namespace

SkipRoutes skip_routes(const std::vector<config::LayerSpec>& layers, const std::vector<int64_t>& main_out,
                       const std::vector<LayerRange>& ranges) {
  const std::vector<LayerCarry> plan = skip_plan(layers, main_out);
  const auto touching = touching_stages(layers, plan, ranges);
  SkipRoutes routes;
  std::map<std::pair<int, int>, int64_t> features;  // per route, in (from, to) order
  const int boundaries = static_cast<int>(ranges.size()) - 1;
  for (int s = 0; s < boundaries; ++s) {
    const size_t last = static_cast<size_t>(ranges[s].last - 1);
    for (const SkipSlot& slot : plan[last].out) {
      const auto route = route_across(touching.at(slot.name), s);
      if (route.first == s) features[route] += slot.features;
    }
  }
  std::map<std::pair<int, int>, int> index;
  for (const auto& [route, width] : features) {
    index[route] = static_cast<int>(routes.routes.size());
    routes.routes.push_back({route.first, route.second, width});
  }
  // Each side's columns from the slots its own layers carry across the boundary.
  const auto routed_in = [&](const std::vector<SkipSlot>& slots, int64_t main, int s) {
    std::vector<RoutedColumns> columns;
    int64_t offset = main;
    for (const SkipSlot& slot : slots) {
      const auto route = route_across(touching.at(slot.name), s);
      if (route.first >= 0) columns.push_back({offset, slot.features, index.at(route)});
      offset += slot.features;
    }
    return columns;
  };
  for (int s = 0; s < boundaries; ++s) {
    const size_t last = static_cast<size_t>(ranges[s].last - 1), next = static_cast<size_t>(ranges[s + 1].first);
    const auto sender = skip_plan(layers, main_out, ranges[s].first, ranges[s].last);
    const auto receiver = skip_plan(layers, main_out, ranges[s + 1].first, ranges[s + 1].last);
    routes.sent.push_back(routed_in(sender[last].out, main_out[last], s));
    routes.received.push_back(routed_in(receiver[next].in, main_out[last], s));
  }
  return routes;
}

}  // namespace sluice::model
