#include "core/common/error.h"

namespace sluice {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kConfig: return "config error";
    case ErrorCode::kState: return "state error";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kComm: return "communication error";
    case ErrorCode::kCuda: return "CUDA error";
    case ErrorCode::kIo: return "I/O error";
    case ErrorCode::kCheckpoint: return "checkpoint error";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kCallback: return "callback error";
    case ErrorCode::kInternal: return "internal error";
  }
  return "unknown error";
}

}  // namespace sluice
