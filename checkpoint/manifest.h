// The metadata ranks exchange before a collective save: dataset creation in parallel HDF5 is collective, so every
// rank must know every dataset's path, shape and checksum (the checksum is a dataset attribute, also collective).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

struct ManifestItem {
  std::string path;
  std::vector<int64_t> dims;
  uint32_t crc32 = 0;
  DataType type = DataType::kFloat32;
  int owner_rank = 0;  // the rank whose data goes into this dataset; not serialized, set from the allgather slot
};

std::string serialize_manifest(const std::vector<ManifestItem>& items);
std::vector<ManifestItem> deserialize_manifest(const std::string& bytes, int owner_rank);

// Rank 0's train values and attributes, broadcast so every rank writes identical attribute values.
std::string serialize_int_map(const std::map<std::string, int64_t>& values);
std::map<std::string, int64_t> deserialize_int_map(const std::string& bytes);
std::string serialize_string_map(const std::map<std::string, std::string>& values);
std::map<std::string, std::string> deserialize_string_map(const std::string& bytes);

}  // namespace sluice::checkpoint
