// The executor's column work for routed skips (core/model/skip_routes.h): what a stage's boundary tensor loses on
// the wire (the routed columns its side holds), and what a route's own message carries.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/skip_routes.h"
#include "kernels/backend.h"
#include "kernels/tensor.h"

namespace sluice::runtime {

// Columns of a boundary tensor of `width` that go on the wire: all but the routed ones.
int64_t wire_width(const std::vector<model::RoutedColumns>& routed, int64_t width);
// The boundary tensor without its routed columns, and back (the routed columns zero; the route's message fills
// them).
kernels::Tensor drop_routed(kernels::Backend& backend, const kernels::Tensor& full,
                            const std::vector<model::RoutedColumns>& routed);
kernels::Tensor restore_routed(kernels::Backend& backend, const kernels::Tensor& wire,
                               const std::vector<model::RoutedColumns>& routed, int64_t width);
// Route `route`'s columns of a boundary tensor side by side ([rows, features]), and written back.
kernels::Tensor gather_route(kernels::Backend& backend, const kernels::Tensor& full,
                             const std::vector<model::RoutedColumns>& routed, int route, int64_t features);
void scatter_route(kernels::Backend& backend, const kernels::Tensor& payload,
                   const std::vector<model::RoutedColumns>& routed, int route, kernels::Tensor& full);

}  // namespace sluice::runtime
