// The library side of the size-tagged public structs (sluice.h, "ABI"): a caller compiled against an older header
// passes a smaller struct_size, a newer one a larger. The library touches only the bytes inside the caller's
// struct_size, so it never reads or writes past the struct the caller actually has.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "core/common/error.h"

namespace sluice::capi {

// What the checks need to know of a size-tagged struct; the messages name it and its initializer.
struct SizedStruct {
  const char* name;           // "sluice_stats"
  const char* init_macro;     // "SLUICE_STATS_INIT"
  size_t first_version_size;  // the struct's size in its first size-tagged version: the smallest accepted
};

// Refuses a struct_size the library cannot serve: 0 (the caller forgot the initializer macro) or below the
// struct's first size-tagged version.
inline void check_struct_size(size_t caller_size, const SizedStruct& kind) {
  if (caller_size == 0 || caller_size < kind.first_version_size) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(kind.name) + "::struct_size is " + std::to_string(caller_size) + ", expected at least " +
                    std::to_string(kind.first_version_size) + " (initialize it with " + kind.init_macro + ")");
  }
}

// An input struct: the caller's bytes up to its struct_size over a zeroed full-size struct (fields the caller
// does not have take their default 0 / NULL). A newer caller's fields this library does not know must be zero:
// silently ignoring a request (a callback, a flag) would compute something other than what was asked.
template <typename T>
T read_sized(const T& in, const SizedStruct& kind) {
  check_struct_size(in.struct_size, kind);
  T copy{};
  std::memcpy(&copy, &in, std::min(in.struct_size, sizeof(T)));
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&in);
  for (size_t i = sizeof(T); i < in.struct_size; ++i) {
    if (bytes[i] != 0) {
      throw Error(ErrorCode::kUnsupported, std::string(kind.name) + "::struct_size is " +
                                               std::to_string(in.struct_size) + " and sets a field at byte " +
                                               std::to_string(i) + " that this library (sizeof " +
                                               std::to_string(sizeof(T)) + ") does not know: link a newer libsluice");
    }
  }
  copy.struct_size = sizeof(T);
  return copy;
}

// An output struct: writes `full` into the caller's first struct_size bytes (no further), then records in
// struct_size how many bytes were filled.
template <typename T>
void write_sized(const T& full, T* out, const SizedStruct& kind) {
  check_struct_size(out->struct_size, kind);
  const size_t filled = std::min(out->struct_size, sizeof(T));
  std::memcpy(out, &full, filled);
  out->struct_size = filled;
}

}  // namespace sluice::capi
