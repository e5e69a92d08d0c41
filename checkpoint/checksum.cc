#include "checkpoint/checksum.h"

#include <libdeflate.h>

namespace sluice::checkpoint {

uint32_t crc32_of(const void* bytes, size_t size) {
  // libdeflate's CRC-32 is the standard one (the value zlib's crc32 and Python's zlib.crc32 give), computed
  // with PCLMUL several times faster than zlib's table method, which bounded checkpoint read throughput.
  return libdeflate_crc32(0, bytes, size);
}

uint32_t crc32_continue(uint32_t crc, const void* bytes, size_t size) { return libdeflate_crc32(crc, bytes, size); }

}  // namespace sluice::checkpoint
