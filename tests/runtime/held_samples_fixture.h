// What the held-sample domain tests share (domain_submitted_test, domain_sample_save_test,
// domain_sample_load_test): one small U-Net on a [2, 8, 8] field (periodic convs, a pool, a transposed conv and a
// skip, so blocks exchange halos at two resolutions), the uneven 2 x 2 split its ranks declare, and the value of
// every sample point, cut to a rank's block. Each test writes its own `pipeline:` and `data:` lines.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/domain_layout.h"
#include "tests/runtime/domain_trainer_runs.h"

namespace sluice::runtime::held_samples {

constexpr int64_t kChannels = 2;
constexpr int64_t kSide = 8;

// An uneven 2 x 2 split (rows cut at 2, columns at 6; whole tiles of 2 at every level): block b is world rank b.
inline const std::vector<config::DomainBox>& declared_blocks() {
  static const std::vector<config::DomainBox> blocks = {
      {{0, 0}, {2, 6}}, {{0, 6}, {2, 2}}, {{2, 0}, {6, 6}}, {{2, 6}, {6, 2}}};
  return blocks;
}

// The config's `model:` section.
inline std::string model_yaml() {
  return "model:\n  inputs: [2, 8, 8]\n  layers:\n"
         "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
         "    - {type: gelu, name: s}\n"
         "    - {type: pool, kernel: 2, mode: max}\n"
         "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
         "    - {type: conv_transpose, channels: 4, kernel: 2, stride: 2}\n"
         "    - {type: concat, from: s}\n"
         "    - {type: conv, channels: 2, kernel: 1}\n";
}

// The `data:` line: external samples, batch 4, FIFO (replay 0) or a replay buffer of that capacity.
inline std::string data_yaml(int64_t replay) {
  return "data: {type: external, batch: 4" +
         (replay > 0 ? ", replay: {capacity: " + std::to_string(replay) + "}" : std::string()) + "}\n";
}

// Point (y, x) of channel c of sample s, on side `kind` (0 inputs, 1 targets).
inline float value(int kind, int64_t s, int64_t c, int64_t y, int64_t x) {
  return static_cast<float>(std::sin(0.37 * static_cast<double>(x + 1) * (c + 1) + 0.23 * static_cast<double>(y) +
                                     0.71 * static_cast<double>(s) + 1.3 * kind));
}

// Samples [first, first + rows) of one side, cut to `box` (the whole field when box is empty).
inline std::vector<float> samples(int kind, int64_t first, int64_t rows, const config::DomainBox& box) {
  const auto of_kind = [kind](int64_t s, int64_t c, int64_t y, int64_t x) { return value(kind, s, c, y, x); };
  return domain_runs::field_samples(of_kind, kChannels, kSide, first, rows, box);
}

}  // namespace sluice::runtime::held_samples
