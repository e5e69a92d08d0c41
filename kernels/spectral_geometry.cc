#include "kernels/spectral_geometry.h"

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

std::string joined(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "x" : "") + std::to_string(values[i]);
  return text;
}

[[noreturn]] void fail(const SpectralGeometry& g, const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "spectral geometry (" + g.describe() + "): " + problem);
}

}  // namespace

int64_t SpectralGeometry::points() const {
  int64_t result = 1;
  for (int64_t n : extents) result *= n;
  return result;
}

int64_t SpectralGeometry::in_features() const { return in_channels * points(); }
int64_t SpectralGeometry::out_features() const { return out_channels * points(); }

int64_t SpectralGeometry::kept_extent(size_t d) const { return d + 1 == dims() ? modes[d] : 2 * modes[d]; }

int64_t SpectralGeometry::kept_modes() const {
  int64_t result = 1;
  for (size_t d = 0; d < dims(); ++d) result *= kept_extent(d);
  return result;
}

int64_t SpectralGeometry::weight_cols() const { return out_channels * kept_modes() * 2; }

std::string SpectralGeometry::describe() const {
  return "spectral " + std::to_string(in_channels) + "x" + joined(extents) + " -> " + std::to_string(out_channels) +
         "x" + joined(extents) + ", modes " + joined(modes);
}

void check_spectral_geometry(const SpectralGeometry& g) {
  if (g.extents.empty() || g.extents.size() > 3) fail(g, "needs 1 to 3 spatial dimensions");
  if (g.modes.size() != g.extents.size()) fail(g, "needs one modes value per spatial dimension");
  if (g.in_channels < 1 || g.out_channels < 1) fail(g, "channels must be positive");
  for (size_t d = 0; d < g.dims(); ++d) {
    if (g.extents[d] < 1 || g.modes[d] < 1) fail(g, "extents and modes must be positive");
    const bool last = d + 1 == g.dims();
    if (last ? g.modes[d] > g.extents[d] / 2 + 1 : 2 * g.modes[d] > g.extents[d]) {
      fail(g, "modes " + std::to_string(g.modes[d]) + " do not fit extent " + std::to_string(g.extents[d]) +
                  (last ? " (the last dimension keeps m <= n/2 + 1)" : " (a non-last dimension keeps 2·m <= n)"));
    }
  }
}

}  // namespace sluice::kernels
