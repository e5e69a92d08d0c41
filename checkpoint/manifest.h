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
#include <utility>
#include <vector>

#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

// One rank's box of a dataset several ranks own by blocks (Entry::global_dims).
struct OwnedBox {
  int rank = 0;  // not serialized, set from the allgather slot
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
};

// owner_rank of a dataset several ranks own by blocks: its `boxes` say who holds what.
constexpr int kBlockOwners = -1;

struct ManifestItem {
  std::string path;
  std::vector<int64_t> dims;  // the whole dataset's, also for a block
  uint32_t crc32 = 0;         // 0 for a block dataset: rank 0 computes it over the slabs as it writes them
  DataType type = DataType::kFloat32;
  int owner_rank = 0;  // the rank whose data goes into this dataset; not serialized, set from the allgather slot
  std::vector<OwnedBox> boxes;  // a block dataset: one rank's box before the merge, every owner's after it
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

// One attribute as the manifest lists it: "@object|name|type|crc32", e.g. "@/|config|string|1a2b3c4d". Every
// attribute a reader trusts is listed (root attributes today; any object's attributes the format adds later), so a
// changed byte in one fails its checksum. Not listed: each dataset's own crc32 (checked against the data) and
// /manifest's crc32 (checked against the manifest text).
enum class AttributeType { kString, kInt64 };
const char* attribute_type_name(AttributeType type);

struct AttributeLine {
  std::string object;  // "/" for the root group, else an absolute group or dataset path
  std::string name;
  AttributeType type = AttributeType::kString;
  uint32_t crc32 = 0;  // attribute_crc32 of its value
};

// The CRC-32 of "object|name|type|" followed by the value's bytes as read (a string without its terminator, an
// int64 as 8 little-endian bytes): bound to where the value sits, like a dataset's crc32.
uint32_t attribute_crc32(const std::string& object, const std::string& name, AttributeType type, const void* bytes,
                         size_t size);
uint32_t attribute_crc32(const std::string& object, const std::string& name, const std::string& value);
uint32_t attribute_crc32(const std::string& object, const std::string& name, int64_t value);

// What /manifest lists: datasets by path, attributes by (object, name).
struct Manifest {
  std::map<std::string, ManifestLine> datasets;
  std::map<std::pair<std::string, std::string>, AttributeLine> attributes;
};

// The manifest text: the dataset lines sorted by path, then the attribute lines sorted by object and name, each
// ended by '\n'.
std::string manifest_text(std::vector<ManifestLine> lines, std::vector<AttributeLine> attributes = {});

// Parses manifest_text. Error(kCheckpoint) naming `file`, dataset /manifest and the offending line when one is
// malformed (not three '|'-separated fields, an unknown type, a bad dimension; for an attribute line not four
// fields, an unknown attribute type or a crc32 that is not 8 hex digits) or lists a path (attribute) twice.
Manifest parse_manifest_text(const std::string& text, const std::string& file);

}  // namespace sluice::checkpoint
