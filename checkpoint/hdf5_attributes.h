// Reading and writing the few attribute kinds the format uses: fixed-length strings (root attributes), int64
// (format_version) and uint32 (crc32). Kept apart from save/read so both use byte-identical encodings.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sluice::checkpoint {

// `file` and `object` only name things in error messages.
void write_string_attribute(hid_t object_id, const std::string& name, const std::string& value,
                            const std::string& file, const std::string& object);
void write_int64_attribute(hid_t object_id, const std::string& name, int64_t value, const std::string& file,
                           const std::string& object);
void write_uint32_attribute(hid_t object_id, const std::string& name, uint32_t value, const std::string& file,
                            const std::string& object);

bool has_attribute(hid_t object_id, const std::string& name);
int64_t read_int64_attribute(hid_t object_id, const std::string& name, const std::string& file,
                             const std::string& object);
uint32_t read_uint32_attribute(hid_t object_id, const std::string& name, const std::string& file,
                               const std::string& object);
// One string attribute (fixed-length up to its terminator, or variable-length); Error(kCheckpoint) naming it when
// it is missing or not a string.
std::string read_string_attribute(hid_t object_id, const std::string& name, const std::string& file,
                                  const std::string& object);
// The names of every attribute of the object, in name order.
std::vector<std::string> attribute_names(hid_t object_id, const std::string& file, const std::string& object);
// Every string-typed attribute of the object; attributes of other types are skipped.
std::map<std::string, std::string> read_string_attributes(hid_t object_id, const std::string& file,
                                                          const std::string& object);

}  // namespace sluice::checkpoint
