// Two views of "which datasets does a checkpoint hold":
// - the metadata ranks exchange before a collective save: rank 0 creates every dataset with its checksum attribute,
//   and every rank checks the same merged list (a path two ranks contribute) and answers rank 0's requests by index;
// - the manifest stored in the file (format_version 2, /manifest): one "path|type|dims" line per dataset, which a
//   reader verifies the file's structure against, and which each dataset's crc32 is bound to (bound_crc32).
// save() writes the manifest and the bound checksums for EVERY dataset it writes (Snapshot entries and /train
// values alike), so a dataset added later through a Snapshot entry needs nothing more.
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

// ---- The on-disk manifest (format_version 2; docs/CHECKPOINT_FORMAT.md) ----

// One dataset as the manifest lists it.
struct ManifestLine {
  std::string path;
  DataType type = DataType::kFloat32;
  std::vector<int64_t> dims;  // empty for a scalar
};

// "path|type|dims", e.g. "/model/layer_0000/weight|float32|6,4"; a scalar has no dims: "/train/step|int64|".
std::string manifest_line(const ManifestLine& line);

// The value of a version-2 dataset's crc32 attribute: the CRC-32 of manifest_line(line) followed by the dataset's
// bytes as stored. A dataset moved to another path, or rewritten with another type or shape, no longer matches.
// (Python: zlib.crc32(data, zlib.crc32(line.encode())).)
uint32_t bound_crc32(const ManifestLine& line, const void* bytes, size_t size);

// The manifest text: the lines sorted by path, each ended by '\n'.
std::string manifest_text(std::vector<ManifestLine> lines);

// Parses manifest_text. Error(kCheckpoint) naming `file`, dataset /manifest and the offending line when one is
// malformed (not three '|'-separated fields, an unknown type, a bad dimension) or lists a path twice.
std::map<std::string, ManifestLine> parse_manifest_text(const std::string& text, const std::string& file);

}  // namespace sluice::checkpoint
