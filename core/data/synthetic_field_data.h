// Deterministic synthetic FIELD samples, whole or one block at a time: every value is a function of (seed, step,
// global row, channel, GLOBAL point) alone, so a rank generates its block of the same global samples that the
// undecomposed run generates whole, bit for bit, and no rank ever holds (or needs) a whole field to do it.
//   inputs  x_c(p): uniform in [-1, 1], number p of the Philox4x64 stream (seed; step, row, c) (philox_uniform.h),
//           p the point's row-major index in the global input field [C_in, D1..Dk]
//   targets at point q of the global output field [C_out, E1..Ek]: the input point p = floor(q·D/E) in each
//           dimension (p = q when the extents agree) and its periodic neighbour p⁺ one point on in the last dimension,
//           z_o = Σ_k A[o][k]·x_k(p) + Σ_k B[o][k]·x_k(p⁺) (A, B fixed seeded [C_out][C_in] maps; added in this
//           order, in float), then
//             kRegression: sin(z_o)                                   (smooth; a conv model's MSE can decrease)
//             kOneHot:     one-hot over the output channels of argmax_o z_o at each point   (cross-entropy)
// Why not SyntheticData's dense map W [targets][inputs]: it cannot be formed per block, and for a large field it
// does not fit in memory at all. make_data_source uses this source for every model whose input and output are
// fields with the same number of spatial dimensions (docs/DOMAIN.md, "Data on blocks").
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/domain_layout.h"
#include "core/config/sample_shape.h"
#include "core/data/data_source.h"
#include "core/data/target_kind.h"

namespace sluice::data {

class SyntheticFieldData : public DataSource {
 public:
  // input_shape [C_in, D..] and output_shape [C_out, E..]: the model's GLOBAL fields (same number of spatial
  // dimensions). The source fills input_box of the input field and output_box of the output field (core/data/
  // field_box.h; an empty box = the whole field): rows of [C_in][input_box] and [C_out][output_box] values.
  // Throws Error(kInvalidArgument) for shapes that are not such fields and for a box outside its field.
  SyntheticFieldData(uint64_t seed, config::SampleShape input_shape, config::SampleShape output_shape,
                     TargetKind kind, config::DomainBox input_box = {}, config::DomainBox output_box = {});

  void batch(int64_t step, int64_t first_row, int64_t rows, float* inputs, float* targets) override;
  int64_t input_features() const override { return input_features_; }
  int64_t target_features() const override { return target_features_; }

 private:
  void fill_inputs(uint64_t step, uint64_t row, float* inputs) const;
  void fill_targets(uint64_t step, uint64_t row, float* targets) const;
  // x_k at the input points of one output line (global outer coordinates `outer`, last dimension from `first` on,
  // `count` points), and at the neighbour of the last: [C_in][span] with span the input points they map to, + 1.
  void input_window(uint64_t step, uint64_t row, const std::vector<int64_t>& outer, int64_t first, int64_t count,
                    std::vector<float>& window, int64_t& begin) const;

  uint64_t seed_;
  config::SampleShape in_;
  config::SampleShape out_;
  TargetKind kind_;
  config::DomainBox in_box_;
  config::DomainBox out_box_;
  int64_t input_features_ = 0;
  int64_t target_features_ = 0;
  std::vector<float> here_map_;       // A, [C_out][C_in]
  std::vector<float> neighbour_map_;  // B, [C_out][C_in]
};

}  // namespace sluice::data
