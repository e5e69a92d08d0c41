#include "checkpoint/checksum.h"

#include <zlib.h>

#include <algorithm>

namespace sluice::checkpoint {

uint32_t crc32_of(const void* bytes, size_t size) {
  // zlib's length argument is a 32-bit uInt, so large parameters are fed in slices.
  constexpr size_t kMaxSlice = size_t{1} << 30;
  const auto* cursor = static_cast<const Bytef*>(bytes);
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    const size_t slice = std::min(size, kMaxSlice);
    crc = crc32(crc, cursor, static_cast<uInt>(slice));
    cursor += slice;
    size -= slice;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace sluice::checkpoint
