// The tests of data on blocks: small field configs, and blocks placed back into whole samples by their boxes
// (independently of core/data/field_box.h's walk, so a wrong walk there shows up here).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/config/domain_layout.h"
#include "core/data/data_source.h"

namespace sluice::data::test_blocks {

inline config::LayerSpec layer(const std::string& type) {
  config::LayerSpec spec;
  spec.type = config::find_layer_type(type).value();
  return spec;
}

inline config::LayerSpec conv(int64_t channels, int64_t kernel = 3) {
  config::LayerSpec spec = layer("conv");
  spec.channels = channels;
  spec.kernel = {kernel};
  spec.padding = config::Padding::kPeriodic;
  return spec;
}

inline config::Config field_config(const config::SampleShape& input, std::vector<config::LayerSpec> layers) {
  config::Config config;
  config.model.input_shape = input;
  config.model.inputs = config::features_of(input);
  config.model.layers = std::move(layers);
  config.data.type = config::DataType::kSynthetic;
  config.data.batch = 4;
  config.seed = 11;
  return config;
}

struct Batch {
  std::vector<float> inputs;
  std::vector<float> targets;
};

inline Batch fetch(DataSource& source, int64_t step, int64_t first_row, int64_t rows) {
  Batch batch{std::vector<float>(static_cast<size_t>(rows * source.input_features())),
              std::vector<float>(static_cast<size_t>(rows * source.target_features()))};
  source.batch(step, first_row, rows, batch.inputs.data(), batch.targets.data());
  return batch;
}

// The block `box` of `field` ([C, D..]) of each of `rows` samples: block values [rows][C][box extents] go to their
// global places in whole samples [rows][C][D..]; `covered` counts how often each global value was written.
inline void place(const std::vector<float>& block, const config::DomainBox& box, const config::SampleShape& field,
                  int64_t rows, std::vector<float>& whole, std::vector<int>& covered) {
  int64_t points = 1, box_points = 1;
  for (size_t d = 1; d < field.size(); ++d) points *= field[d];
  for (int64_t e : box.extent) box_points *= e;
  ASSERT_EQ(static_cast<int64_t>(block.size()), rows * field[0] * box_points);
  for (int64_t i = 0; i < static_cast<int64_t>(block.size()); ++i) {
    const int64_t row = i / (field[0] * box_points), c = i / box_points % field[0];
    int64_t local = i % box_points, global = 0, stride = 1;
    for (size_t d = box.extent.size(); d-- > 0;) {
      global += (box.offset[d] + local % box.extent[d]) * stride;
      local /= box.extent[d];
      stride *= field[d + 1];
    }
    const size_t at = static_cast<size_t>((row * field[0] + c) * points + global);
    whole[at] = block[static_cast<size_t>(i)];
    ++covered[at];
  }
}

// The output field's box of an input box: offset and extent times out / in per dimension (whole by the test's
// choice of splits).
inline config::DomainBox output_box(const config::DomainBox& box, const config::SampleShape& in,
                                    const config::SampleShape& out) {
  config::DomainBox scaled;
  for (size_t d = 0; d < box.offset.size(); ++d) {
    scaled.offset.push_back(box.offset[d] * out[d + 1] / in[d + 1]);
    scaled.extent.push_back(box.extent[d] * out[d + 1] / in[d + 1]);
  }
  return scaled;
}

// Bit equality (memcmp), naming the first differing value.
inline void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      ADD_FAILURE() << what << ": value " << i << " is " << a[i] << ", the whole sample's " << b[i];
      return;
    }
  }
}

}  // namespace sluice::data::test_blocks
