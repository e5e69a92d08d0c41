#include "checkpoint/manifest.h"

#include <cstring>

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

}  // namespace

std::string serialize_manifest(const std::vector<ManifestItem>& items) {
  std::string out;
  for (const ManifestItem& item : items) {
    put_string(out, item.path);
    put<uint32_t>(out, static_cast<uint32_t>(item.dims.size()));
    for (int64_t dim : item.dims) put<int64_t>(out, dim);
    put<uint32_t>(out, item.crc32);
    put<uint8_t>(out, static_cast<uint8_t>(item.type));
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
