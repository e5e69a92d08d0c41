// The shape of one convolution over a batch of fields, as the backends' conv ops take it: channels, then 1 to 3
// spatial extents per sample (C order, the last extent varying fastest: PyTorch's N·C·D·H·W without N). A field
// tensor is a 2-D Tensor [samples][channels · Π extents]; a weight is [out][in/groups · Π kernel], the memory of
// PyTorch's [out, in/groups, k..]; a bias is [1][out]. Pure data and arithmetic, no library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::kernels {

struct ConvGeometry {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t groups = 1;
  std::vector<int64_t> in;         // spatial input extents (1 to 3)
  std::vector<int64_t> kernel;     // per spatial dimension
  std::vector<int64_t> stride;     // per spatial dimension, >= 1
  std::vector<int64_t> dilation;   // per spatial dimension, >= 1 (PyTorch's: 1 = dense)
  std::vector<int64_t> pad_low;    // implicit zeros before the first element, per spatial dimension
  std::vector<int64_t> pad_high;   // and after the last
  std::vector<int64_t> out;        // spatial output extents (conv_output_extent of the above)

  size_t dims() const { return in.size(); }
  int64_t in_features() const;   // in_channels · Π in
  int64_t out_features() const;  // out_channels · Π out
  int64_t weight_cols() const;   // in_channels / groups · Π kernel
  std::string describe() const;  // "conv 3x64x64 -> 8x64x64, kernel 3x3, stride 1x1, ..." for error messages
};

// PyTorch's output extent: ⌊(n + low + high − dilation·(k − 1) − 1) / stride⌋ + 1; < 1 when the kernel does not fit.
int64_t conv_output_extent(int64_t n, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_low,
                           int64_t pad_high);

// The total padding that keeps the extent at stride 1 (dilation·(k − 1)), split as PyTorch's padding='same':
// the low side gets half rounded down, so an even kernel pads one more on the high side.
int64_t same_pad_low(int64_t kernel, int64_t dilation);
int64_t same_pad_high(int64_t kernel, int64_t dilation);

// Fills `out` from the other fields. Throws Error(kInvalidArgument) naming the field when the geometry is not one
// (no spatial dimension or more than 3, sizes that differ per dimension, non-positive values, channels not
// divisible by groups, an output extent < 1).
void complete_conv_geometry(ConvGeometry& geometry);

// Explicit padding copied around each sample's field (the paddings oneDNN and cuDNN do not have): periodic wraps
// around the field's own edges, reflect mirrors without repeating the edge (PyTorch's 'circular' and 'reflect').
enum class PadMode { kPeriodic, kReflect };

struct PadGeometry {
  PadMode mode = PadMode::kPeriodic;
  int64_t channels = 0;
  std::vector<int64_t> in;        // spatial extents before padding
  std::vector<int64_t> low;       // per spatial dimension
  std::vector<int64_t> high;
  std::vector<int64_t> padded() const;  // in + low + high per dimension
  int64_t in_features() const;
  int64_t out_features() const;
};

// Throws Error(kInvalidArgument) when a pad is negative, or for periodic wider than the extent, for reflect not
// narrower than it (PyTorch's limits).
void check_pad_geometry(const PadGeometry& geometry);

// Pooling with stride = kernel and no padding: every extent a multiple of its kernel, each output element the max
// or the mean of its own window (PyTorch's max_poolNd / avg_poolNd with stride = kernel).
enum class PoolMode { kMax, kAvg };

struct PoolGeometry {
  PoolMode mode = PoolMode::kMax;
  int64_t channels = 0;
  std::vector<int64_t> in;      // spatial input extents (1 to 3)
  std::vector<int64_t> kernel;  // window (and stride) per spatial dimension
  std::vector<int64_t> out() const;  // in / kernel per dimension
  int64_t in_features() const;
  int64_t out_features() const;
  std::string describe() const;  // "max pool 2x8x8 -> 2x4x4, kernel 2x2"
};

// Throws Error(kInvalidArgument) naming the field when the geometry is not one (1 to 3 dimensions, positive
// values, an extent that its kernel does not divide).
void check_pool_geometry(const PoolGeometry& geometry);

// Upsampling by integer factors: nearest repeats each element, linear interpolates as PyTorch's
// interpolate(mode='linear'/'bilinear'/'trilinear', align_corners=False), the edges clamped.
enum class ResampleMode { kNearest, kLinear };

struct ResampleGeometry {
  ResampleMode mode = ResampleMode::kNearest;
  int64_t channels = 0;
  std::vector<int64_t> in;      // spatial input extents (1 to 3)
  std::vector<int64_t> factor;  // per spatial dimension, >= 1
  std::vector<int64_t> out() const;  // in · factor per dimension
  int64_t in_features() const;
  int64_t out_features() const;
  std::string describe() const;
};

void check_resample_geometry(const ResampleGeometry& geometry);

// A transposed convolution (PyTorch's conv_transposeNd, groups 1, no padding, dilation 1): the adjoint of the
// convolution from `out` to `in`. The weight is [in_channels][out_channels · Π kernel], the memory of PyTorch's
// ConvTranspose weight [in, out, k..]; a bias is [1][out].
struct DeconvGeometry {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  std::vector<int64_t> in;      // spatial input extents (1 to 3)
  std::vector<int64_t> kernel;  // per spatial dimension
  std::vector<int64_t> stride;  // per spatial dimension
  std::vector<int64_t> out() const;  // (n − 1) · stride + kernel per dimension
  int64_t in_features() const;
  int64_t out_features() const;
  int64_t weight_cols() const;  // out_channels · Π kernel
  std::string describe() const;
};

void check_deconv_geometry(const DeconvGeometry& geometry);

}  // namespace sluice::kernels
