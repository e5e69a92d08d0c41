#include "checkpoint/manifest.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <sstream>

#include "checkpoint/checksum.h"
#include "checkpoint/format.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

// Fixed-width native-endian fields: the bytes never leave the job, so no portable encoding is needed.
template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

void put_string(std::string& out, const std::string& text) {
  put<uint64_t>(out, text.size());
  out += text;
}

class ByteCursor {
 public:
  explicit ByteCursor(const std::string& bytes) : bytes_(bytes) {}
  bool done() const { return offset_ == bytes_.size(); }

  template <typename T>
  T take() {
    require(sizeof(T));
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  std::string take_string() {
    const auto length = take<uint64_t>();
    require(length);
    std::string text = bytes_.substr(offset_, length);
    offset_ += length;
    return text;
  }

 private:
  void require(size_t count) const {
    if (bytes_.size() - offset_ < count) {
      throw Error(ErrorCode::kInternal, "checkpoint manifest bytes are truncated (exchange between ranks broke)");
    }
  }
  const std::string& bytes_;
  size_t offset_ = 0;
};

Error manifest_error(const std::string& file, const std::string& line, const std::string& problem) {
  return Error(ErrorCode::kCheckpoint, "checkpoint '" + file + "', dataset " + kManifestDataset + ": line '" + line +
                                           "' " + problem);
}

// "6,4" -> {6, 4}; "" -> {} (a scalar). Each dimension is a non-negative decimal integer.
bool parse_dims(const std::string& text, std::vector<int64_t>& dims) {
  if (text.empty()) return true;
  std::istringstream fields(text);
  for (std::string field; std::getline(fields, field, ',');) {
    if (field.empty() || field.size() > 18 || field.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    dims.push_back(std::stoll(field));
  }
  return text.back() != ',';
}

ManifestLine parse_line(const std::string& text, const std::string& file) {
  const size_t first = text.find('|');
  const size_t second = first == std::string::npos ? first : text.find('|', first + 1);
  if (second == std::string::npos || text.find('|', second + 1) != std::string::npos) {
    throw manifest_error(file, text, "is not 'path|type|dims'");
  }
  ManifestLine line;
  line.path = text.substr(0, first);
  if (line.path.size() < 2 || line.path[0] != '/') throw manifest_error(file, text, "has no absolute dataset path");
  if (!data_type_from_name(text.substr(first + 1, second - first - 1), line.type)) {
    throw manifest_error(file, text, "names an unknown element type (float32, float64, int32, int64)");
  }
  if (!parse_dims(text.substr(second + 1), line.dims)) {
    throw manifest_error(file, text, "has dimensions that are not non-negative integers separated by ','");
  }
  return line;
}

bool attribute_type_from_name(const std::string& name, AttributeType& type) {
  for (AttributeType candidate : {AttributeType::kString, AttributeType::kInt64}) {
    if (name == attribute_type_name(candidate)) {
      type = candidate;
      return true;
    }
  }
  return false;
}

std::string crc_hex(uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", crc);
  return text;
}

std::string attribute_line_text(const AttributeLine& line) {
  return "@" + line.object + "|" + line.name + "|" + attribute_type_name(line.type) + "|" + crc_hex(line.crc32);
}

// "@object|name|type|crc32" (the leading '@' already checked by the caller).
AttributeLine parse_attribute_line(const std::string& text, const std::string& file) {
  std::vector<std::string> fields;
  std::istringstream input(text.substr(1));
  for (std::string field; std::getline(input, field, '|');) fields.push_back(field);
  if (fields.size() != 4 || text.back() == '|') throw manifest_error(file, text, "is not '@object|name|type|crc32'");
  AttributeLine line;
  line.object = fields[0];
  line.name = fields[1];
  if (line.object.empty() || line.object[0] != '/' || line.name.empty()) {
    throw manifest_error(file, text, "has no absolute object path or no attribute name");
  }
  if (!attribute_type_from_name(fields[2], line.type)) {
    throw manifest_error(file, text, "names an unknown attribute type (string, int64)");
  }
  if (fields[3].size() != 8 || fields[3].find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw manifest_error(file, text, "has a crc32 that is not 8 lower-case hex digits");
  }
  line.crc32 = static_cast<uint32_t>(std::stoul(fields[3], nullptr, 16));
  return line;
}

}  // namespace

const char* attribute_type_name(AttributeType type) {
  return type == AttributeType::kInt64 ? "int64" : "string";
}

uint32_t attribute_crc32(const std::string& object, const std::string& name, AttributeType type, const void* bytes,
                         size_t size) {
  const std::string header = object + "|" + name + "|" + attribute_type_name(type) + "|";
  return crc32_continue(crc32_of(header.data(), header.size()), bytes, size);
}

uint32_t attribute_crc32(const std::string& object, const std::string& name, const std::string& value) {
  return attribute_crc32(object, name, AttributeType::kString, value.data(), value.size());
}

uint32_t attribute_crc32(const std::string& object, const std::string& name, int64_t value) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(static_cast<uint64_t>(value) >> (8 * i));
  return attribute_crc32(object, name, AttributeType::kInt64, bytes, sizeof(bytes));
}

std::string manifest_line(const ManifestLine& line) {
  std::string text = line.path + "|" + data_type_name(line.type) + "|";
  for (size_t i = 0; i < line.dims.size(); ++i) text += (i ? "," : "") + std::to_string(line.dims[i]);
  return text;
}

uint32_t bound_crc32(const ManifestLine& line, const void* bytes, size_t size) {
  const std::string header = manifest_line(line);
  return crc32_continue(crc32_of(header.data(), header.size()), bytes, size);
}

std::string manifest_text(std::vector<ManifestLine> lines, std::vector<AttributeLine> attributes) {
  std::sort(lines.begin(), lines.end(), [](const ManifestLine& a, const ManifestLine& b) { return a.path < b.path; });
  std::sort(attributes.begin(), attributes.end(), [](const AttributeLine& a, const AttributeLine& b) {
    return std::tie(a.object, a.name) < std::tie(b.object, b.name);
  });
  std::string text;
  for (const ManifestLine& line : lines) text += manifest_line(line) + "\n";
  for (const AttributeLine& line : attributes) text += attribute_line_text(line) + "\n";
  return text;
}

Manifest parse_manifest_text(const std::string& text, const std::string& file) {
  Manifest manifest;
  std::istringstream input(text);
  for (std::string raw; std::getline(input, raw);) {
    if (!raw.empty() && raw[0] == '@') {
      AttributeLine line = parse_attribute_line(raw, file);
      auto key = std::make_pair(line.object, line.name);
      if (!manifest.attributes.emplace(std::move(key), std::move(line)).second) {
        throw manifest_error(file, raw, "lists its attribute a second time");
      }
      continue;
    }
    ManifestLine line = parse_line(raw, file);
    const std::string path = line.path;
    if (!manifest.datasets.emplace(path, std::move(line)).second) {
      throw manifest_error(file, raw, "lists its path a second time");
    }
  }
  return manifest;
}

std::string serialize_manifest(const std::vector<ManifestItem>& items) {
  std::string out;
  for (const ManifestItem& item : items) {
    put_string(out, item.path);
    put<uint32_t>(out, static_cast<uint32_t>(item.dims.size()));
    for (int64_t dim : item.dims) put<int64_t>(out, dim);
    put<uint32_t>(out, item.crc32);
    put<uint8_t>(out, static_cast<uint8_t>(item.type));
    put<uint32_t>(out, static_cast<uint32_t>(item.boxes.size()));
    for (const OwnedBox& box : item.boxes) {
      put<uint32_t>(out, static_cast<uint32_t>(box.offset.size()));
      for (size_t d = 0; d < box.offset.size(); ++d) {
        put<int64_t>(out, box.offset[d]);
        put<int64_t>(out, box.extent[d]);
      }
    }
  }
  return out;
}

std::vector<ManifestItem> deserialize_manifest(const std::string& bytes, int owner_rank) {
  std::vector<ManifestItem> items;
  ByteCursor cursor(bytes);
  while (!cursor.done()) {
    ManifestItem item;
    item.path = cursor.take_string();
    const auto rank = cursor.take<uint32_t>();
    for (uint32_t d = 0; d < rank; ++d) item.dims.push_back(cursor.take<int64_t>());
    item.crc32 = cursor.take<uint32_t>();
    item.type = static_cast<DataType>(cursor.take<uint8_t>());
    item.owner_rank = owner_rank;
    const auto boxes = cursor.take<uint32_t>();
    for (uint32_t b = 0; b < boxes; ++b) {
      OwnedBox box;
      box.rank = owner_rank;
      const auto box_rank = cursor.take<uint32_t>();
      for (uint32_t d = 0; d < box_rank; ++d) {
        box.offset.push_back(cursor.take<int64_t>());
        box.extent.push_back(cursor.take<int64_t>());
      }
      item.boxes.push_back(std::move(box));
    }
    items.push_back(std::move(item));
  }
  return items;
}

std::string serialize_int_map(const std::map<std::string, int64_t>& values) {
  std::string out;
  for (const auto& [name, value] : values) {
    put_string(out, name);
    put<int64_t>(out, value);
  }
  return out;
}

std::map<std::string, int64_t> deserialize_int_map(const std::string& bytes) {
  std::map<std::string, int64_t> values;
  ByteCursor cursor(bytes);
  while (!cursor.done()) {
    std::string name = cursor.take_string();
    values[name] = cursor.take<int64_t>();
  }
  return values;
}

std::string serialize_string_map(const std::map<std::string, std::string>& values) {
  std::string out;
  for (const auto& [name, value] : values) {
    put_string(out, name);
    put_string(out, value);
  }
  return out;
}

std::map<std::string, std::string> deserialize_string_map(const std::string& bytes) {
  std::map<std::string, std::string> values;
  ByteCursor cursor(bytes);
  while (!cursor.done()) {
    std::string name = cursor.take_string();
    values[name] = cursor.take_string();
  }
  return values;
}

}  // namespace sluice::checkpoint
