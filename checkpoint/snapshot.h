// The trainer-agnostic description of what one rank puts into a checkpoint. The checkpoint module never sees the
// model or the optimizer: the trainer flattens its state into named float arrays and reads them back by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sluice::checkpoint {

// Element type of an entry. The trainer's tensors are all float32; application state (/application/...) may be any.
enum class DataType : uint8_t { kFloat32 = 0, kFloat64 = 1, kInt32 = 2, kInt64 = 3 };

// Bytes per element of `type`, and its name as docs and messages spell it ("float32", "int64", ...).
size_t data_type_size(DataType type);
const char* data_type_name(DataType type);
// The inverse of data_type_name; false (type untouched) for any other text.
bool data_type_from_name(const std::string& name, DataType& type);

// One named array, e.g. path "/model/layer_0003/weight" with dims {out, in} (row-major). Build paths with
// layer_paths.h so they follow the layout; dims may be empty for a scalar (then data has one value).
// A float32 entry keeps its values in `data`; an entry of another type (only /application/... arrays) keeps them
// in `bytes` (native byte order, element count x data_type_size(type) bytes) and leaves `data` empty.
struct Entry {
  std::string path;
  std::vector<int64_t> dims;
  std::vector<float> data;
  DataType type = DataType::kFloat32;
  std::vector<unsigned char> bytes;
  // A block of a dataset several ranks own together (the submitted samples on a pipeline.domain split): when
  // `global_dims` is not empty the dataset has those dims, `dims` is this rank's box of it starting at `box_offset`,
  // and `data` holds the box's values row-major. The owners' boxes must tile the dataset exactly (save() checks);
  // the file holds the whole dataset, as if one rank had written it.
  std::vector<int64_t> global_dims;
  std::vector<int64_t> box_offset;

  bool is_block() const { return !global_dims.empty(); }
  // The values as stored, whichever member holds them.
  const void* values() const { return type == DataType::kFloat32 ? static_cast<const void*>(data.data()) : bytes.data(); }
  size_t value_bytes() const { return type == DataType::kFloat32 ? data.size() * sizeof(float) : bytes.size(); }
};

// What ONE rank contributes to a collective save(). Entries of different ranks must have different paths (each
// layer belongs to one pipeline stage; data-parallel replicas other than 0 contribute no entries), except block
// entries (Entry::global_dims), of which each owner contributes its box. train_ints and
// attributes describe the whole job: rank 0's are written, and any other rank must pass either nothing or the same.
struct Snapshot {
  std::vector<Entry> entries;                     // /model/..., /optimizer/..., /accumulation/..., /application/...
  std::map<std::string, int64_t> train_ints;      // /train/<name>: step, seed, data_position, ...
  std::map<std::string, std::string> attributes;  // root attributes: config, created_by, layout_* (save_layout.h)
};

}  // namespace sluice::checkpoint
