#include "kernels/rng.h"

#include <Random123/philox.h>

#include <cstddef>

namespace sluice::kernels {
namespace {

// The top 24 bits fill a float mantissa exactly, so every value is representable and strictly below 1.
float to_unit_float(uint64_t bits) { return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f); }

}  // namespace

RngStream dropout_stream(uint64_t seed, int layer, uint64_t first_sample, int64_t features) {
  return RngStream{seed, static_cast<uint64_t>(layer), static_cast<uint64_t>(RngPurpose::kDropout), first_sample,
                   static_cast<uint64_t>(features)};
}

RngStream init_stream(uint64_t seed, int layer, int parameter) {
  return RngStream{seed, static_cast<uint64_t>(layer),
                   static_cast<uint64_t>(RngPurpose::kInitBase) + static_cast<uint64_t>(parameter), 0, 0};
}

void uniform_floats(const RngStream& stream, uint64_t first, uint64_t count, float* out) {
  using Philox = r123::Philox4x64;
  Philox philox;
  const Philox::key_type key = {{stream.seed, 0}};
  Philox::ctr_type counter = {{0, 0, stream.layer, stream.purpose}};
  bool have = false;
  Philox::ctr_type random = {{0, 0, 0, 0}};
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t element = first + i;
    uint64_t sample = 0, position = element;  // position inside the sample's own sequence
    if (stream.row_width > 0) {
      sample = element / stream.row_width;
      position = element % stream.row_width;
    }
    sample += stream.first_sample;
    const uint64_t block = position / 4;
    if (!have || counter.v[0] != block || counter.v[1] != sample) {
      counter.v[0] = block;
      counter.v[1] = sample;
      random = philox(counter, key);
      have = true;
    }
    out[i] = to_unit_float(random.v[position % 4]);
  }
}

namespace {

int64_t product(const std::vector<int64_t>& extents) {
  int64_t n = 1;
  for (const int64_t e : extents) n *= e;
  return n;
}

}  // namespace

int64_t FieldBlockKey::block_features() const { return channels * product(extent); }

int64_t FieldBlockKey::field_features() const { return channels * product(global); }

// The block's rows along its last dimension are runs of consecutive global features: each run is drawn in one call
// (uniform_floats reuses a Philox block across its 4 words), walking the block's points in row-major order.
void block_uniform_floats(const RngStream& stream, const FieldBlockKey& key, uint64_t row, float* out) {
  const size_t dims = key.extent.size();  // at least 1 (Backend checks the key)
  const int64_t run = key.extent[dims - 1];
  const int64_t runs_per_channel = product(key.extent) / run;
  const uint64_t row_start = row * static_cast<uint64_t>(key.field_features());
  std::vector<int64_t> index(dims, 0);  // the run's block point, the last dimension 0
  for (int64_t c = 0; c < key.channels; ++c) {
    for (int64_t r = 0; r < runs_per_channel; ++r) {
      int64_t global = c;  // the run's first feature in the whole field, row-major over [channels][global..]
      for (size_t d = 0; d < dims; ++d) global = global * key.global[d] + key.offset[d] + index[d];
      uniform_floats(stream, row_start + static_cast<uint64_t>(global), static_cast<uint64_t>(run), out);
      out += run;
      for (size_t d = dims - 1; d > 0; --d) {  // the next run: the next point over all but the last dimension
        if (++index[d - 1] < key.extent[d - 1]) break;
        index[d - 1] = 0;
      }
    }
  }
}

}  // namespace sluice::kernels
