// The (P, M, V) combinations every schedule test sweeps, so all tests agree on what "a grid" means.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/cost_model.h"

namespace sluice {
namespace schedule {
namespace testing {

struct GridPoint {
  std::string name;
  int ranks;
  int microbatches;
  int chunks;
};

// Every schedule with P in 1..6, M in 1..13 (every generator accepts any M >= 1) and the chunk counts it takes.
inline std::vector<GridPoint> valid_grid() {
  std::vector<GridPoint> points;
  for (int p = 1; p <= 6; ++p) {
    for (int m = 1; m <= 13; ++m) {
      points.push_back({"gpipe", p, m, 1});
      points.push_back({"1f1b", p, m, 1});
      points.push_back({"zb-h1", p, m, 1});
      points.push_back({"zb-v", p, m, 2});
      points.push_back({"interleaved", p, m, 2});
      points.push_back({"interleaved", p, m, 3});
    }
  }
  return points;
}

inline std::string describe(const GridPoint& point) {
  return point.name + " P=" + std::to_string(point.ranks) + " M=" + std::to_string(point.microbatches) +
         " V=" + std::to_string(point.chunks);
}

// A cost model with the given F, I, W and per-message latency (the tests' cost shapes).
inline CostModel costs_of(double f, double i, double w, double latency = 0.0) {
  CostModel costs;
  costs.forward = f;
  costs.backward_input = i;
  costs.backward_weight = w;
  costs.latency = latency;
  return costs;
}

}  // namespace testing
}  // namespace schedule
}  // namespace sluice
