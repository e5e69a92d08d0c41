// A wait that timed out (request_wait.h) inside a collective call is this rank's failure like any other: it must
// reach the call's agreement, whose verdict then names the silent rank(s) on every live rank, instead of leaving
// the call alone on this rank while the others still wait for it.
#pragma once

#include <exception>
#include <utility>

#include "core/common/error.h"

namespace sluice::comm {

// Runs `part` (the part of a call between its opening and closing agreements) and returns its outcome, or, when
// it threw Error(kTimeout), a default outcome whose `error` holds that exception, for the closing agreement.
// Other exceptions pass through unchanged.
template <typename Part>
auto timeout_as_failure(Part&& part) -> decltype(part()) {
  try {
    return std::forward<Part>(part)();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kTimeout) throw;
    decltype(part()) outcome{};
    outcome.error = std::current_exception();
    return outcome;
  }
}

}  // namespace sluice::comm
