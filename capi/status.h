// Maps Sluice's C++ errors onto the C API's status codes and keeps the per-thread last-error text.
#pragma once

#include <string>

#include "capi/include/sluice/sluice.h"
#include "core/common/error.h"

namespace sluice::capi {

sluice_status to_status(ErrorCode code);
// The inverse of to_status (SLUICE_OK and unknown values map to kInternal).
ErrorCode to_error_code(sluice_status status);
// Records `message` as this thread's last error and returns `status`.
sluice_status fail(sluice_status status, const std::string& message);
void clear_last_error();
const char* last_error();

// Runs `body` and converts anything it throws into a status + last-error message. Nothing escapes.
template <typename Body>
sluice_status guarded(const char* function, Body&& body) {
  clear_last_error();
  try {
    body();
    return SLUICE_OK;
  } catch (const Error& e) {
    return fail(to_status(e.code()), std::string(function) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    // Not a bug in Sluice: a size the host passed (a batch, a width) needs more memory than there is.
    return fail(SLUICE_ERROR_INVALID_ARGUMENT,
                std::string(function) + ": out of memory (std::bad_alloc): a size passed in or in the config "
                                        "(data.batch, rows, a layer width) needs more memory than this process can get");
  } catch (const std::exception& e) {
    return fail(SLUICE_ERROR_INTERNAL, std::string(function) + ": " + e.what());
  } catch (...) {
    return fail(SLUICE_ERROR_INTERNAL, std::string(function) + ": unknown exception");
  }
}

}  // namespace sluice::capi
