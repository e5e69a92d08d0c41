// Which skip tensors travel as their own messages between pipeline stages instead of riding through the stages
// between (issue 27 item 3). A skip tensor X lives on the stages that touch it: its producer's and each of its
// readers'. Between two consecutive touching stages a and b with stages between them, X goes straight from a to b
// (a route); the stages between do not hold it at all (skip_plan's ranged form: their layers carry only the skips
// they touch). Stage a's output still has X's columns (its last layer carries X on): the executor takes them out
// for the route's message and leaves them off the activation message; stage b's input has X's columns, which the
// executor fills from the route's message. Backward the other way: b's input gradient gives the route's gradient
// message, which fills X's columns of a's output gradient. Consecutive touching stages (b = a + 1) keep X in the
// activation message. The gradient that comes back to a is the very tensor the stages between would have copied
// through, so the sums at the readers and at X happen in the same order as in the sequential run.
// Pure: the layer list, each layer's own output width and the split into stages.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/layer_spec.h"
#include "core/model/partition.h"

namespace sluice::model {

struct SkipRoute {
  int from = 0;           // the stage sending the skip tensors forward (and receiving their gradient)
  int to = 0;             // the stage reading them, from + 2 or later
  int64_t features = 0;   // per sample: Σ widths of the skip tensors it carries
};

// Where one routed skip tensor sits in a stage's boundary tensor [main | carried skips], and the route carrying it.
struct RoutedColumns {
  int64_t first = 0;
  int64_t count = 0;
  int route = 0;  // index into SkipRoutes::routes
};

struct SkipRoutes {
  std::vector<SkipRoute> routes;  // by (from, to)
  // Per boundary s (the output of stage s, the input of stage s + 1; s = 0 .. stages - 2), in column order: the
  // routed skips in stage s's output (those it sends; where the route's gradient goes back) and in stage s + 1's
  // input (those it receives; where its gradient is taken from). A routed skip is held by at most one side; the
  // activation message between them is either side's tensor without its routed columns.
  std::vector<std::vector<RoutedColumns>> sent;
  std::vector<std::vector<RoutedColumns>> received;
  bool empty() const { return routes.empty(); }
};

// `main_out[i]`: layer i's own output width (without carried skips); `ranges`: the layers of each stage, in order.
SkipRoutes skip_routes(const std::vector<config::LayerSpec>& layers, const std::vector<int64_t>& main_out,
                       const std::vector<LayerRange>& ranges);

}  // namespace sluice::model
