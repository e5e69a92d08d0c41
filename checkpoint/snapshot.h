// The trainer-agnostic description of what one rank puts into a checkpoint. The checkpoint module never sees the
// model or the optimizer: the trainer flattens its state into named float arrays and reads them back by name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sluice::checkpoint {

// One named float array, e.g. path "/model/layer_0003/weight" with dims {out, in} (row-major). Build paths with
// layer_paths.h so they follow the layout; dims may be empty for a scalar (then data has one value).
struct Entry {
  std::string path;
  std::vector<int64_t> dims;
  std::vector<float> data;
};

// What ONE rank contributes to a collective save(). Entries of different ranks must have different paths (each
// layer belongs to one pipeline stage; data-parallel replicas other than 0 contribute no entries). train_ints and
// attributes describe the whole job: rank 0's are written, and any other rank must pass either nothing or the same.
struct Snapshot {
  std::vector<Entry> entries;                     // /model/..., /optimizer/..., /accumulation/...
  std::map<std::string, int64_t> train_ints;      // /train/<name>: step, seed, data_position, ...
  std::map<std::string, std::string> attributes;  // root attributes: config, created_by, layout_* (save_layout.h)
};

}  // namespace sluice::checkpoint
