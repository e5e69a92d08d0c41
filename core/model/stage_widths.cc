#include "core/model/stage_widths.h"

#include "core/model/skip_plan.h"

namespace sluice::model {
namespace {

constexpr double kBytesPerFloat = 4.0;

std::vector<int64_t> main_widths(const std::vector<LayerShape>& shapes) {
  std::vector<int64_t> main_out;
  for (const LayerShape& shape : shapes) main_out.push_back(config::features_of(shape.out_shape));
  return main_out;
}

}  // namespace

std::vector<int64_t> stage_in_widths(const config::ModelSpec& spec, const std::vector<LayerShape>& shapes,
                                     const LayerRange& range) {
  std::vector<int64_t> widths;
  for (const LayerShape& shape : shapes) widths.push_back(shape.in);
  if (!config::has_skips(spec.layers)) return widths;
  const std::vector<LayerCarry> plan = skip_plan(spec.layers, main_widths(shapes), range.first, range.last);
  for (int l = range.first; l < range.last; ++l) {
    const size_t at = static_cast<size_t>(l);
    widths[at] = config::features_of(shapes[at].in_shape) + carried_features(plan[at].in);
  }
  return widths;
}

std::vector<int64_t> activation_widths(const std::vector<LayerShape>& shapes, const std::vector<LayerRange>& ranges,
                                       const SkipRoutes& routes) {
  std::vector<int64_t> widths;
  for (size_t s = 0; s + 1 < ranges.size(); ++s) {
    int64_t width = shapes[static_cast<size_t>(ranges[s].last - 1)].out;  // main and every skip carried past
    for (const SkipRoute& route : routes.routes) {
      if (route.from <= static_cast<int>(s) && static_cast<int>(s) < route.to) width -= route.features;
    }
    widths.push_back(width);
  }
  return widths;
}

PartitionCosts routed_partition_costs(const config::ModelSpec& spec, const std::vector<LayerShape>& shapes,
                                      const config::PipelineSpec& pipeline, const std::vector<LayerRange>& ranges) {
  PartitionCosts costs = partition_costs(shapes, pipeline);
  const SkipRoutes routes = skip_routes_of(spec, shapes, ranges);
  if (routes.empty()) return costs;
  const double per_feature = 2.0 * kBytesPerFloat * pipeline.flop_rate / pipeline.bandwidth;
  // A routed skip leaves every cut it passes (LayerShape::out counts it at each) and is put back at its sender's end.
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (const SkipRoute& route : routes.routes) {
      const int from_end = ranges[static_cast<size_t>(route.from)].last - 1;
      const int to_start = ranges[static_cast<size_t>(route.to)].first;
      if (from_end <= static_cast<int>(i) && static_cast<int>(i) < to_start) {
        costs.boundaries[i] -= per_feature * static_cast<double>(route.features);
      }
    }
  }
  for (const SkipRoute& route : routes.routes) {
    const size_t from_end = static_cast<size_t>(ranges[static_cast<size_t>(route.from)].last - 1);
    costs.boundaries[from_end] += per_feature * static_cast<double>(route.features);
  }
  return costs;
}

std::vector<int> choose_model_split(const config::ModelSpec& spec, const std::vector<LayerShape>& shapes,
                                    const config::PipelineSpec& pipeline, int chunks) {
  const PartitionCosts carried = partition_costs(shapes, pipeline);
  const std::vector<int> first = choose_split(pipeline.split, carried, chunks);
  if (!pipeline.split.empty() || !config::has_skips(spec.layers)) return first;
  const PartitionCosts first_routed = routed_partition_costs(spec, shapes, pipeline, split_to_ranges(first));
  const std::vector<int> second = balanced_split(first_routed, chunks);
  const double first_cost = slowest_chunk(first_routed, first);
  const double second_cost =
      slowest_chunk(routed_partition_costs(spec, shapes, pipeline, split_to_ranges(second)), second);
  return second_cost < first_cost ? second : first;
}

}  // namespace sluice::model
