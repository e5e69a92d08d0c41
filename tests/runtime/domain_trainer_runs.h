// What the trainer-level domain tests share (domain_trainer_test, domain_normalization_test,
// domain_submitted_test): a run's parameters read off a Trainer and compared bit for bit, a path every rank agrees
// on, and square 2-D field samples cut to a rank's block. Each test keeps its own model and sample values.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/config/domain_layout.h"
#include "core/model/stage_module.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime::domain_runs {

// Every parameter a rank holds, by qualified name.
using Params = std::map<std::string, std::vector<float>>;

inline Params params_of(const Trainer& trainer) {
  Params p;
  for (const auto& [index, stage] : trainer.parts().stages) {
    for (model::Parameter* param : stage->parameters()) {
      p[param->qualified_name()].assign(param->value.data(), param->value.data() + param->value.size());
    }
  }
  return p;
}

// How many of `got`'s parameters are missing from `want` or differ in any bit.
inline int differing_params(const Params& got, const Params& want) {
  int differing = 0;
  for (const auto& [name, values] : got) {
    const auto it = want.find(name);
    if (it == want.end() || it->second.size() != values.size() ||
        std::memcmp(values.data(), it->second.data(), values.size() * sizeof(float)) != 0) {
      ++differing;
    }
  }
  return differing;
}

// A path every rank agrees on (TEST_TMPDIR is the same for all ranks of one mpirun).
inline std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// value(sample, channel, y, x) of a [channels][side][side] field.
using FieldValue = std::function<float(int64_t, int64_t, int64_t, int64_t)>;

// Samples [first, first + rows) cut to `box` ([rows][channels][box extents]); the whole field when box is empty.
inline std::vector<float> field_samples(const FieldValue& value, int64_t channels, int64_t side, int64_t first,
                                        int64_t rows, const config::DomainBox& box) {
  const int64_t y0 = box.offset.empty() ? 0 : box.offset[0], ny = box.extent.empty() ? side : box.extent[0];
  const int64_t x0 = box.offset.empty() ? 0 : box.offset[1], nx = box.extent.empty() ? side : box.extent[1];
  std::vector<float> out;
  for (int64_t s = first; s < first + rows; ++s) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t y = y0; y < y0 + ny; ++y) {
        for (int64_t x = x0; x < x0 + nx; ++x) out.push_back(value(s, c, y, x));
      }
    }
  }
  return out;
}

// Whole-field rows [rows][channels][side][side] cut to `box`.
inline std::vector<float> cut_field(const std::vector<float>& whole, int64_t channels, int64_t side,
                                    const config::DomainBox& box) {
  const int64_t points = side * side;
  std::vector<float> out;
  for (size_t s = 0; s < whole.size() / static_cast<size_t>(channels * points); ++s) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t y = box.offset[0]; y < box.offset[0] + box.extent[0]; ++y) {
        for (int64_t x = box.offset[1]; x < box.offset[1] + box.extent[1]; ++x) {
          out.push_back(whole[(s * channels + c) * points + y * side + x]);
        }
      }
    }
  }
  return out;
}

}  // namespace sluice::runtime::domain_runs
