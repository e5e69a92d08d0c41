// CRC-32 (IEEE; the value zlib.crc32 gives) of a dataset's bytes: cheap enough to compute on every save and every read, and strong enough to
// catch the torn writes and bit flips a checkpoint on a shared file system actually meets.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::checkpoint {

uint32_t crc32_of(const void* bytes, size_t size);
// The CRC-32 of (the bytes `crc` was computed over) followed by `bytes`: zlib.crc32(bytes, crc).
uint32_t crc32_continue(uint32_t crc, const void* bytes, size_t size);

}  // namespace sluice::checkpoint
