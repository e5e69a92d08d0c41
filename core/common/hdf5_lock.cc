#include "core/common/hdf5_lock.h"

namespace sluice {

namespace {

// Defined in one translation unit of one library, so every user in the process shares the same mutex.
std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

}  // namespace

Hdf5Lock::Hdf5Lock() : lock_(hdf5_mutex()) {}

}  // namespace sluice
