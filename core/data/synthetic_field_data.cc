#include "core/data/synthetic_field_data.h"

#include <cmath>
#include <string>
#include <utility>

#include "core/common/checked_math.h"
#include "core/common/error.h"
#include "core/data/batch_arguments.h"
#include "core/data/field_box.h"
#include "core/data/philox_uniform.h"

namespace sluice::data {

namespace {

// Key streams of their own: a field's inputs never reuse SyntheticData's numbers (streams 1 and 2) or the maps'.
constexpr uint64_t kFieldInputStream = 3;
constexpr uint64_t kFieldMapStream = 4;

bool positive_field(const config::SampleShape& shape) {
  if (!config::is_field(shape)) return false;
  for (int64_t extent : shape) {
    if (extent < 1) return false;
  }
  return true;
}

// A [C_out][C_in] map of uniform numbers scaled so that z (2·C_in terms) has unit variance for x uniform in [-1, 1]:
// sin(z) is then clearly non-linear but smooth enough for a small model to fit, as SyntheticData's map.
std::vector<float> channel_map(uint64_t seed, uint64_t which, int64_t outputs, int64_t inputs) {
  const Philox::key_type key = {{seed, kFieldMapStream}};
  const float scale = 3.0f / std::sqrt(static_cast<float>(2 * inputs));
  std::vector<float> map(static_cast<size_t>(outputs * inputs));
  for (int64_t o = 0; o < outputs; ++o) {
    fill_uniform_run(key, static_cast<uint64_t>(o), which, 0, 0, inputs, map.data() + o * inputs);
  }
  for (float& value : map) value *= scale;
  return map;
}

}  // namespace

SyntheticFieldData::SyntheticFieldData(uint64_t seed, config::SampleShape input_shape,
                                       config::SampleShape output_shape, TargetKind kind,
                                       config::DomainBox input_box, config::DomainBox output_box)
    : seed_(seed), in_(std::move(input_shape)), out_(std::move(output_shape)), kind_(kind) {
  if (!positive_field(in_) || !positive_field(out_) || in_.size() != out_.size()) {
    throw Error(ErrorCode::kInvalidArgument,
                "SyntheticFieldData: the input " + config::shape_text(in_) + " and output " + config::shape_text(out_) +
                    " must both be fields [C, D1..Dk] of positive extents with the same number of spatial dimensions");
  }
  in_box_ = input_box.offset.empty() && input_box.extent.empty() ? whole_box(in_) : std::move(input_box);
  out_box_ = output_box.offset.empty() && output_box.extent.empty() ? whole_box(out_) : std::move(output_box);
  check_box(in_box_, in_, "synthetic field data, input block");
  check_box(out_box_, out_, "synthetic field data, output block");
  input_features_ = checked_mul(in_[0], box_points(in_box_), "synthetic field data: input block values");
  target_features_ = checked_mul(out_[0], box_points(out_box_), "synthetic field data: output block values");
  here_map_ = channel_map(seed_, 0, out_[0], in_[0]);
  neighbour_map_ = channel_map(seed_, 1, out_[0], in_[0]);
}

void SyntheticFieldData::fill_inputs(uint64_t step, uint64_t row, float* inputs) const {
  const Philox::key_type key = {{seed_, kFieldInputStream}};
  const int64_t points = box_points(in_box_);
  const int64_t line = in_box_.extent.back();
  for (int64_t c = 0; c < in_[0]; ++c) {
    for_each_box_line(in_box_, [&](const std::vector<int64_t>& first, int64_t index) {
      fill_uniform_run(key, step, row, static_cast<uint64_t>(c), global_point_index(in_, first), line,
                       inputs + c * points + index * line);
    });
  }
}

void SyntheticFieldData::input_window(uint64_t step, uint64_t row, const std::vector<int64_t>& outer, int64_t first,
                                      int64_t count, std::vector<float>& window, int64_t& begin) const {
  const Philox::key_type key = {{seed_, kFieldInputStream}};
  const size_t last = outer.size() - 1;
  std::vector<int64_t> point(outer.size());
  for (size_t d = 0; d < last; ++d) point[d] = outer[d] * in_[d + 1] / out_[d + 1];
  const int64_t extent = in_[last + 1];
  begin = first * extent / out_[last + 1];
  const int64_t end = (first + count - 1) * extent / out_[last + 1] + 1;  // one past the last mapped point
  const int64_t span = end - begin + 1;                                   // + the periodic neighbour of the last
  window.resize(static_cast<size_t>(in_[0] * span));
  for (int64_t k = 0; k < in_[0]; ++k) {
    point[last] = begin;
    fill_uniform_run(key, step, row, static_cast<uint64_t>(k), global_point_index(in_, point), span - 1,
                     window.data() + k * span);
    point[last] = end % extent;
    fill_uniform_run(key, step, row, static_cast<uint64_t>(k), global_point_index(in_, point), 1,
                     window.data() + k * span + span - 1);
  }
}

void SyntheticFieldData::fill_targets(uint64_t step, uint64_t row, float* targets) const {
  const int64_t inputs = in_[0], outputs = out_[0];
  const int64_t points = box_points(out_box_);
  const int64_t line = out_box_.extent.back();
  const int64_t from = in_.back(), to = out_.back();
  std::vector<float> window, z(static_cast<size_t>(outputs));
  for_each_box_line(out_box_, [&](const std::vector<int64_t>& first, int64_t index) {
    int64_t begin = 0;
    input_window(step, row, first, first.back(), line, window, begin);
    const int64_t span = static_cast<int64_t>(window.size()) / inputs;
    for (int64_t j = 0; j < line; ++j) {
      const int64_t i = (first.back() + j) * from / to - begin;
      for (int64_t o = 0; o < outputs; ++o) {
        float sum = 0.0f;
        for (int64_t k = 0; k < inputs; ++k) sum += here_map_[o * inputs + k] * window[k * span + i];
        for (int64_t k = 0; k < inputs; ++k) sum += neighbour_map_[o * inputs + k] * window[k * span + i + 1];
        z[o] = sum;
      }
      float* at = targets + index * line + j;
      if (kind_ == TargetKind::kRegression) {
        for (int64_t o = 0; o < outputs; ++o) at[o * points] = std::sin(z[o]);
      } else {
        int64_t winner = 0;
        for (int64_t o = 1; o < outputs; ++o) winner = z[o] > z[winner] ? o : winner;
        for (int64_t o = 0; o < outputs; ++o) at[o * points] = o == winner ? 1.0f : 0.0f;
      }
    }
  });
}

void SyntheticFieldData::batch(int64_t step, int64_t first_row, int64_t rows, float* inputs, float* targets) {
  if (!check_batch_arguments("SyntheticFieldData::batch", step, first_row, rows, inputs, targets)) return;
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t row = static_cast<uint64_t>(first_row + r);
    fill_inputs(static_cast<uint64_t>(step), row, inputs + r * input_features_);
    fill_targets(static_cast<uint64_t>(step), row, targets + r * target_features_);
  }
}

}  // namespace sluice::data
