// The shape of a spectral convolution (a Fourier neural operator's layer) over a batch of periodic fields, as the
// backends' spectral ops take it. A field tensor is [samples][channels · Π extents] (C order, the last extent
// varying fastest). The layer keeps, of the field's real FFT, the modes 0..m−1 and −m..−1 of every non-last
// dimension and 0..m−1 of the last (the half spectrum's first m): the "kept" block of 2·m1 × .. × 2·m(k−1) × mk
// complex modes, held in that order (in a non-last dimension the first m positions are the modes 0..m−1, the next m
// the modes −m..−1). The weight is [in][out · kept · 2], the memory of [in, out, 2·m1, .., mk, 2] (real, imaginary
// last). Pure data and arithmetic, no library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::kernels {

struct SpectralGeometry {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  std::vector<int64_t> extents;  // spatial extents n1..nk (1 to 3)
  std::vector<int64_t> modes;    // m1..mk, one per spatial dimension

  size_t dims() const { return extents.size(); }
  int64_t points() const;        // Π extents
  int64_t in_features() const;   // in_channels · points()
  int64_t out_features() const;  // out_channels · points()
  // The kept extent of dimension d: 2·m for a non-last dimension, m for the last.
  int64_t kept_extent(size_t d) const;
  int64_t kept_modes() const;    // Π kept_extent
  int64_t weight_cols() const;   // out_channels · kept_modes() · 2
  std::string describe() const;  // "spectral 3x8x8 -> 4x8x8, modes 2x3" for error messages
};

// Throws Error(kInvalidArgument) naming the field when the geometry is not one: no spatial dimension or more than
// 3, a modes list of another length, values < 1, or modes that do not fit the extents (2·m > n in a non-last
// dimension, m > n/2 + 1 in the last).
void check_spectral_geometry(const SpectralGeometry& geometry);

}  // namespace sluice::kernels
