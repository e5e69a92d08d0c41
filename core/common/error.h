// One exception type for all of Sluice's C++ code. Each carries a category that the C API maps 1:1 onto a
// `sluice_status` code, so `capi/` can translate without guessing from message text.
#pragma once

#include <stdexcept>
#include <string>

namespace sluice {

enum class ErrorCode {
  kInvalidArgument,
  kConfig,
  kState,
  kUnsupported,
  kComm,
  kCuda,
  kIo,
  kCheckpoint,
  kTimeout,
  kCallback,
  kInternal,
  kNumeric,  // a NaN or Inf in a step's data, loss or gradients (appended: the agreement sends codes by number)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace sluice
