#include "kernels/cpu/transpose_tiles.h"

#include <algorithm>

#include "kernels/cpu/avx512_lanes.h"

namespace sluice::kernels {
namespace {

// Square tiles: a sample's [256, 256] is 256 KiB, and a plain loop's column walk touched a new cache line at every
// element.
constexpr int64_t kTile = 32;

// The tile [r0, r1) x [c0, c1) element by element.
void transpose_block(const float* in, int64_t rows, int64_t cols, float* out, int64_t r0, int64_t r1, int64_t c0,
                     int64_t c1) {
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
}

#if defined(SLUICE_AVX512_LANES)
SLUICE_AVX512_CODE_BEGIN

// 16 x 16 floats from `in` (row stride ld_in) transposed into `out` (row stride ld_out): pairs of rows interleaved,
// then 4 x 4 transposes inside each 128-bit lane, then the 4 x 4 transpose of the lanes.
SLUICE_AVX512 void transpose16(const float* in, int64_t ld_in, float* out, int64_t ld_out) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(in + i * ld_in);
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + j]: lane L holds column 4L + j of rows 4i .. 4i + 3.
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 v0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), v1 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
    const __m512 v2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    const __m512 v3 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
    _mm512_storeu_ps(out + j * ld_out, _mm512_shuffle_f32x4(v0, v2, 0x88));         // lane 0: column j
    _mm512_storeu_ps(out + (4 + j) * ld_out, _mm512_shuffle_f32x4(v1, v3, 0x88));   // lane 1
    _mm512_storeu_ps(out + (8 + j) * ld_out, _mm512_shuffle_f32x4(v0, v2, 0xDD));   // lane 2
    _mm512_storeu_ps(out + (12 + j) * ld_out, _mm512_shuffle_f32x4(v1, v3, 0xDD));  // lane 3
  }
}

// The tile [r0, r1) x [c0, c1): whole 16 x 16 blocks in registers, the rest element by element.
SLUICE_AVX512 void transpose_tile_avx512(const float* in, int64_t rows, int64_t cols, float* out, int64_t r0,
                                         int64_t r1, int64_t c0, int64_t c1) {
  int64_t r = r0;
  for (; r + 16 <= r1; r += 16) {
    int64_t c = c0;
    for (; c + 16 <= c1; c += 16) transpose16(in + r * cols + c, cols, out + c * rows + r, rows);
    transpose_block(in, rows, cols, out, r, r + 16, c, c1);
  }
  transpose_block(in, rows, cols, out, r, r1, c0, c1);
}

SLUICE_AVX512_CODE_END
#endif

template <typename Tile>
void by_tiles(const float* in, int64_t rows, int64_t cols, float* out, Tile&& tile) {
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      tile(in, rows, cols, out, r0, std::min(rows, r0 + kTile), c0, std::min(cols, c0 + kTile));
    }
  }
}

}  // namespace

void transpose_matrix_portable(const float* in, int64_t rows, int64_t cols, float* out) {
  by_tiles(in, rows, cols, out, transpose_block);
}

void transpose_matrix(const float* in, int64_t rows, int64_t cols, float* out) {
#if defined(SLUICE_AVX512_LANES)
  if (avx512_available()) {
    by_tiles(in, rows, cols, out, transpose_tile_avx512);
    return;
  }
#endif
  transpose_matrix_portable(in, rows, cols, out);
}

}  // namespace sluice::kernels
