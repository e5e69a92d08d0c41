#include "kernels/norm_geometry.h"

#include "core/common/error.h"

namespace sluice::kernels {

std::string NormGeometry::describe() const {
  return std::to_string(channels) + " channels in " + std::to_string(groups) + " groups, " + std::to_string(points) +
         " points, eps " + std::to_string(eps);
}

void check_norm_geometry(const NormGeometry& g) {
  auto refuse = [&](const std::string& problem) {
    throw Error(ErrorCode::kInvalidArgument, "norm geometry (" + g.describe() + "): " + problem);
  };
  if (g.channels < 1) refuse("channels must be positive");
  if (g.groups < 1) refuse("groups must be positive");
  if (g.points < 1) refuse("points must be positive");
  if (g.channels % g.groups != 0) refuse("groups must divide channels");
  if (!(g.eps > 0.0f)) refuse("eps must be positive");
}

}  // namespace sluice::kernels
