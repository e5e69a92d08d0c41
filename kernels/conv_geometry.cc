#include "kernels/conv_geometry.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

int64_t product(const std::vector<int64_t>& values) {
  int64_t result = 1;
  for (int64_t v : values) result *= v;
  return result;
}

std::string joined(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "x" : "") + std::to_string(values[i]);
  return text;
}

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "convolution geometry: " + problem);
}

void require_per_dimension(const char* field, const std::vector<int64_t>& values, size_t dims, int64_t minimum) {
  if (values.size() != dims) {
    fail(std::string(field) + " has " + std::to_string(values.size()) + " values for " + std::to_string(dims) +
         " spatial dimensions");
  }
  for (int64_t v : values) {
    if (v < minimum) fail(std::string(field) + " " + joined(values) + " has a value below " + std::to_string(minimum));
  }
}

}  // namespace

int64_t ConvGeometry::in_features() const { return in_channels * product(in); }
int64_t ConvGeometry::out_features() const { return out_channels * product(out); }
int64_t ConvGeometry::weight_cols() const { return in_channels / groups * product(kernel); }

std::string ConvGeometry::describe() const {
  return "conv " + std::to_string(in_channels) + "x" + joined(in) + " -> " + std::to_string(out_channels) + "x" +
         joined(out) + ", kernel " + joined(kernel) + ", stride " + joined(stride) + ", dilation " + joined(dilation) +
         ", groups " + std::to_string(groups);
}

int64_t conv_output_extent(int64_t n, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_low,
                           int64_t pad_high) {
  const int64_t span = n + pad_low + pad_high - dilation * (kernel - 1) - 1;
  if (span < 0 || stride < 1) return 0;
  return span / stride + 1;
}

int64_t same_pad_low(int64_t kernel, int64_t dilation) { return dilation * (kernel - 1) / 2; }
int64_t same_pad_high(int64_t kernel, int64_t dilation) {
  return dilation * (kernel - 1) - same_pad_low(kernel, dilation);
}

void complete_conv_geometry(ConvGeometry& g) {
  const size_t dims = g.in.size();
  if (dims < 1 || dims > 3) fail(std::to_string(dims) + " spatial dimensions; 1 to 3 are supported");
  require_per_dimension("input extents", g.in, dims, 1);
  require_per_dimension("kernel", g.kernel, dims, 1);
  require_per_dimension("stride", g.stride, dims, 1);
  require_per_dimension("dilation", g.dilation, dims, 1);
  require_per_dimension("low padding", g.pad_low, dims, 0);
  require_per_dimension("high padding", g.pad_high, dims, 0);
  if (g.groups < 1 || g.in_channels < 1 || g.out_channels < 1 || g.in_channels % g.groups != 0 ||
      g.out_channels % g.groups != 0) {
    fail("channels " + std::to_string(g.in_channels) + " -> " + std::to_string(g.out_channels) +
         " are not both positive multiples of groups " + std::to_string(g.groups));
  }
  g.out.assign(dims, 0);
  for (size_t d = 0; d < dims; ++d) {
    g.out[d] = conv_output_extent(g.in[d], g.kernel[d], g.stride[d], g.dilation[d], g.pad_low[d], g.pad_high[d]);
    if (g.out[d] < 1) {
      fail("a kernel of " + std::to_string(g.kernel[d]) + " (dilation " + std::to_string(g.dilation[d]) +
           ") does not fit an extent of " + std::to_string(g.in[d]) + " with padding " + std::to_string(g.pad_low[d]) +
           "+" + std::to_string(g.pad_high[d]));
    }
  }
}

std::vector<int64_t> PadGeometry::padded() const {
  std::vector<int64_t> extents = in;
  for (size_t d = 0; d < extents.size(); ++d) extents[d] += low[d] + high[d];
  return extents;
}

int64_t PadGeometry::in_features() const { return channels * product(in); }
int64_t PadGeometry::out_features() const { return channels * product(padded()); }

void check_pad_geometry(const PadGeometry& g) {
  if (g.in.empty() || g.low.size() != g.in.size() || g.high.size() != g.in.size() || g.channels < 1) {
    fail("padding needs channels >= 1 and a low and high pad per spatial dimension");
  }
  for (size_t d = 0; d < g.in.size(); ++d) {
    const int64_t widest = std::max(g.low[d], g.high[d]);
    const bool fits = g.mode == PadMode::kPeriodic ? widest <= g.in[d] : widest < g.in[d];
    if (g.low[d] < 0 || g.high[d] < 0 || g.in[d] < 1 || !fits) {
      fail(std::string(g.mode == PadMode::kPeriodic ? "periodic" : "reflect") + " padding " +
           std::to_string(g.low[d]) + "+" + std::to_string(g.high[d]) + " of an extent of " + std::to_string(g.in[d]) +
           (g.mode == PadMode::kPeriodic ? " (at most the extent)" : " (less than the extent)"));
    }
  }
}

namespace {

// 1 to 3 spatial dimensions, and every per-dimension field one positive value per dimension.
void require_spatial(const std::vector<int64_t>& in, int64_t channels,
                     std::initializer_list<std::pair<const char*, const std::vector<int64_t>*>> fields) {
  const size_t dims = in.size();
  if (dims < 1 || dims > 3) fail(std::to_string(dims) + " spatial dimensions; 1 to 3 are supported");
  if (channels < 1) fail("channels " + std::to_string(channels) + " is not positive");
  require_per_dimension("input extents", in, dims, 1);
  for (const auto& [name, values] : fields) require_per_dimension(name, *values, dims, 1);
}

}  // namespace

std::vector<int64_t> PoolGeometry::out() const {
  std::vector<int64_t> extents = in;
  for (size_t d = 0; d < extents.size() && d < kernel.size(); ++d) extents[d] /= std::max<int64_t>(kernel[d], 1);
  return extents;
}
int64_t PoolGeometry::in_features() const { return channels * product(in); }
int64_t PoolGeometry::out_features() const { return channels * product(out()); }
std::string PoolGeometry::describe() const {
  return std::string(mode == PoolMode::kMax ? "max" : "avg") + " pool " + std::to_string(channels) + "x" +
         joined(in) + " -> " + std::to_string(channels) + "x" + joined(out()) + ", kernel " + joined(kernel);
}

void check_pool_geometry(const PoolGeometry& g) {
  require_spatial(g.in, g.channels, {{"pool kernel", &g.kernel}});
  for (size_t d = 0; d < g.in.size(); ++d) {
    if (g.in[d] % g.kernel[d] != 0) {
      fail("pool kernel " + std::to_string(g.kernel[d]) + " does not divide extent " + std::to_string(g.in[d]) +
           " (" + g.describe() + ")");
    }
  }
}

std::vector<int64_t> ResampleGeometry::out() const {
  std::vector<int64_t> extents = in;
  for (size_t d = 0; d < extents.size() && d < factor.size(); ++d) extents[d] *= factor[d];
  return extents;
}
int64_t ResampleGeometry::in_features() const { return channels * product(in); }
int64_t ResampleGeometry::out_features() const { return channels * product(out()); }
std::string ResampleGeometry::describe() const {
  return std::string(mode == ResampleMode::kNearest ? "nearest" : "linear") + " upsample " +
         std::to_string(channels) + "x" + joined(in) + " -> " + std::to_string(channels) + "x" + joined(out()) +
         ", factor " + joined(factor);
}

void check_resample_geometry(const ResampleGeometry& g) {
  require_spatial(g.in, g.channels, {{"upsample factor", &g.factor}});
}

std::vector<int64_t> DeconvGeometry::out() const {
  std::vector<int64_t> extents = in;
  for (size_t d = 0; d < extents.size() && d < kernel.size() && d < stride.size(); ++d) {
    extents[d] = (in[d] - 1) * stride[d] + kernel[d];
  }
  return extents;
}
int64_t DeconvGeometry::in_features() const { return in_channels * product(in); }
int64_t DeconvGeometry::out_features() const { return out_channels * product(out()); }
int64_t DeconvGeometry::weight_cols() const { return out_channels * product(kernel); }
std::string DeconvGeometry::describe() const {
  return "conv_transpose " + std::to_string(in_channels) + "x" + joined(in) + " -> " + std::to_string(out_channels) +
         "x" + joined(out()) + ", kernel " + joined(kernel) + ", stride " + joined(stride);
}

void check_deconv_geometry(const DeconvGeometry& g) {
  require_spatial(g.in, g.in_channels, {{"kernel", &g.kernel}, {"stride", &g.stride}});
  if (g.out_channels < 1) fail("output channels " + std::to_string(g.out_channels) + " is not positive");
}

}  // namespace sluice::kernels
