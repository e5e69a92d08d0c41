#include "capi/status.h"

#include "core/common/message_text.h"

namespace sluice::capi {
namespace {
thread_local std::string t_last_error;
}

sluice_status to_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return SLUICE_ERROR_INVALID_ARGUMENT;
    case ErrorCode::kConfig: return SLUICE_ERROR_CONFIG;
    case ErrorCode::kState: return SLUICE_ERROR_STATE;
    case ErrorCode::kUnsupported: return SLUICE_ERROR_UNSUPPORTED;
    case ErrorCode::kComm: return SLUICE_ERROR_COMM;
    case ErrorCode::kCuda: return SLUICE_ERROR_CUDA;
    case ErrorCode::kIo: return SLUICE_ERROR_IO;
    case ErrorCode::kCheckpoint: return SLUICE_ERROR_CHECKPOINT;
    case ErrorCode::kTimeout: return SLUICE_ERROR_TIMEOUT;
    case ErrorCode::kCallback: return SLUICE_ERROR_CALLBACK;
    case ErrorCode::kInternal: return SLUICE_ERROR_INTERNAL;
    case ErrorCode::kNumeric: return SLUICE_ERROR_NUMERIC;
  }
  return SLUICE_ERROR_INTERNAL;
}

ErrorCode to_error_code(sluice_status status) {
  for (ErrorCode code : {ErrorCode::kInvalidArgument, ErrorCode::kConfig, ErrorCode::kState, ErrorCode::kUnsupported,
                         ErrorCode::kComm, ErrorCode::kCuda, ErrorCode::kIo, ErrorCode::kCheckpoint,
                         ErrorCode::kTimeout, ErrorCode::kCallback, ErrorCode::kNumeric}) {
    if (to_status(code) == status) return code;
  }
  return ErrorCode::kInternal;
}

sluice_status fail(sluice_status status, const std::string& message) {
  // A last resort for values no message builder shortened (a path of megabytes from the host).
  t_last_error = shorten_for_message(message, 4000);
  return status;
}

void clear_last_error() { t_last_error.clear(); }

const char* last_error() { return t_last_error.c_str(); }

}  // namespace sluice::capi
