// Collective operations deadlock if one rank throws and the others walk on into the next collective call. Every
// step of save()/verify_all() that can fail on some ranks only therefore ends with agree_or_throw(): all ranks
// learn whether anyone failed and throw the SAME Error (the lowest failing rank's), or all continue.
#pragma once

#include <mpi.h>

#include <optional>

#include "core/common/error.h"

namespace sluice::checkpoint {

// Collective over comm. Returns normally only if no rank passed a failure.
void agree_or_throw(MPI_Comm comm, const std::optional<Error>& local_failure);

// Runs step() and captures a sluice::Error it throws (any other exception becomes kInternal), for agree_or_throw.
template <typename Step>
std::optional<Error> capture_failure(Step&& step) {
  try {
    step();
  } catch (const Error& error) {
    return error;
  } catch (const std::exception& error) {
    return Error(ErrorCode::kInternal, error.what());
  }
  return std::nullopt;
}

}  // namespace sluice::checkpoint
