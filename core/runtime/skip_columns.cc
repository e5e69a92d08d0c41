#include "core/runtime/skip_columns.h"

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// Calls keep(first, count, wire_first) for each run of unrouted columns of a boundary tensor of `width`.
template <typename Keep>
void for_each_kept(const std::vector<model::RoutedColumns>& routed, int64_t width, Keep keep) {
  int64_t column = 0, wire = 0;
  for (const model::RoutedColumns& r : routed) {
    if (r.first > column) keep(column, r.first - column, wire);
    wire += r.first - column;
    column = r.first + r.count;
  }
  if (width > column) keep(column, width - column, wire);
}

}  // namespace

int64_t wire_width(const std::vector<model::RoutedColumns>& routed, int64_t width) {
  int64_t total = width;
  for (const model::RoutedColumns& r : routed) total -= r.count;
  return total;
}

kernels::Tensor drop_routed(kernels::Backend& backend, const kernels::Tensor& full,
                            const std::vector<model::RoutedColumns>& routed) {
  kernels::Tensor wire = backend.empty(full.rows(), wire_width(routed, full.cols()));
  for_each_kept(routed, full.cols(), [&](int64_t first, int64_t count, int64_t wire_first) {
    backend.copy_columns(full, first, wire, wire_first, count);
  });
  return wire;
}

kernels::Tensor restore_routed(kernels::Backend& backend, const kernels::Tensor& wire,
                               const std::vector<model::RoutedColumns>& routed, int64_t width) {
  if (wire.cols() != wire_width(routed, width))
    throw Error(ErrorCode::kInternal, "a boundary message of " + std::to_string(wire.cols()) + " columns, expected " +
                                          std::to_string(wire_width(routed, width)));
  kernels::Tensor full = backend.zeros(wire.rows(), width);
  for_each_kept(routed, width, [&](int64_t first, int64_t count, int64_t wire_first) {
    backend.copy_columns(wire, wire_first, full, first, count);
  });
  return full;
}

kernels::Tensor gather_route(kernels::Backend& backend, const kernels::Tensor& full,
                             const std::vector<model::RoutedColumns>& routed, int route, int64_t features) {
  kernels::Tensor payload = backend.empty(full.rows(), features);
  int64_t at = 0;
  for (const model::RoutedColumns& r : routed) {
    if (r.route != route) continue;
    backend.copy_columns(full, r.first, payload, at, r.count);
    at += r.count;
  }
  return payload;
}

void scatter_route(kernels::Backend& backend, const kernels::Tensor& payload,
                   const std::vector<model::RoutedColumns>& routed, int route, kernels::Tensor& full) {
  int64_t at = 0;
  for (const model::RoutedColumns& r : routed) {
    if (r.route != route) continue;
    backend.copy_columns(payload, at, full, r.first, r.count);
    at += r.count;
  }
}

}  // namespace sluice::runtime
