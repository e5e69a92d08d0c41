// Counter-based random numbers (Philox4x64-10 from Random123). A stream is named by what it is FOR, never by
// the order in which it is drawn, so a recomputed forward gets the same dropout mask and parameter init does
// not depend on how the layers are partitioned over ranks.
//   key     = {seed, 0}
//   counter = {block, sample, global layer index, purpose}
// A flat stream (row_width 0: parameter init) is one sequence: element i is word i % 4 of block i / 4, sample 0.
// A per-sample stream (row_width W > 0: dropout over a [rows][W] tensor) draws each row from its own sample:
// element i is row i / W, feature f = i % W, and takes word f % 4 of block f / 4 of sample first_sample + row.
// So a dropout mask element is a function of (seed, layer, global sample index, feature) only: it does not
// depend on the micro-batch, replica, stage or call the sample travels in (layout-invariant randomness).
#pragma once

#include <cstdint>
#include <vector>

namespace sluice::kernels {

// What a stream is drawn for; keeps dropout and the init of each parameter apart.
enum class RngPurpose : uint64_t {
  kDropout = 0,
  kReplay = 8,  // the replay buffer's batch draws (core/runtime/sample_store.h): counter {block, draw, 0, 8}
  kInitBase = 16,  // parameter p of a layer uses kInitBase + p
};

struct RngStream {
  uint64_t seed = 0;
  uint64_t layer = 0;  // global layer index
  uint64_t purpose = static_cast<uint64_t>(RngPurpose::kDropout);
  uint64_t first_sample = 0;  // global sample index of row 0 (per-sample streams)
  uint64_t row_width = 0;     // elements per sample; 0: a flat stream
};

// Stream for the dropout mask of global layer `layer` over rows of `features` elements whose first row is global
// sample `first_sample` (its position in the stream of samples since step 0; see runtime::StepData).
RngStream dropout_stream(uint64_t seed, int layer, uint64_t first_sample, int64_t features);
// Stream for the initial values of parameter number `parameter` (0-based, in the layer's own order).
RngStream init_stream(uint64_t seed, int layer, int parameter);

// Uniform floats in [0, 1) for elements [first, first + count) of `stream`.
void uniform_floats(const RngStream& stream, uint64_t first, uint64_t count, float* out);

// Where a per-sample stream's rows are one block of each sample's field (a domain-split field, docs/DOMAIN.md): a
// row holds the block [channels][extent..] (C order) at `offset` of the whole field [channels][global..], and the
// stream draws rows of the whole field's channels · Π global features. A block element is keyed by its feature in
// the whole field (channel · Π global + the point's global row-major index), so a block's dropout mask is the
// corresponding part of the whole field's, whatever the split. Plain extents: the caller's domain, not core's.
struct FieldBlockKey {
  int64_t channels = 0;
  std::vector<int64_t> global;  // the whole field's spatial extents
  std::vector<int64_t> offset;  // the block's, per dimension
  std::vector<int64_t> extent;

  int64_t block_features() const;  // channels · Π extent: a row of the block
  int64_t field_features() const;  // channels · Π global: the stream's row width
};

// Uniform floats in [0, 1) for the key.block_features() elements of row `row` of a block (sample
// stream.first_sample + row): element f is the whole field's element at the global feature of f, as
// uniform_floats(stream, row · field_features() + that feature, 1) draws it. The key is trusted (Backend checks it).
void block_uniform_floats(const RngStream& stream, const FieldBlockKey& key, uint64_t row, float* out);

}  // namespace sluice::kernels
