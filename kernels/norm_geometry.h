// The shape of a normalization over a batch of fields, as the backends' group-norm and channel-layernorm ops take
// it. A field tensor is [samples][channels · points] (channels first, then the spatial points in C order), its
// affine parameters weight and bias [1][channels]. Pure data and arithmetic, no library.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::kernels {

struct NormGeometry {
  int64_t channels = 0;
  int64_t groups = 1;  // group norm: channels / groups consecutive channels share statistics (instance norm: = channels)
  int64_t points = 1;  // spatial points per channel (Π extents)
  float eps = 1e-5f;

  int64_t features() const { return channels * points; }
  std::string describe() const;  // "4 channels in 2 groups, 12 points, eps 1e-05" for error messages
};

// Throws Error(kInvalidArgument) naming the field when the geometry is not one: channels, groups or points < 1,
// groups not dividing channels, eps not positive.
void check_norm_geometry(const NormGeometry& geometry);

}  // namespace sluice::kernels
