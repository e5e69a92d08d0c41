#include "core/runtime/agreement.h"

#include <vector>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// The error's category as a number, or -1 for none. Non-Sluice exceptions count as internal errors.
double category_of(const std::exception_ptr& error) {
  if (!error) return -1.0;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return static_cast<double>(e.code());
  } catch (...) {
    return static_cast<double>(ErrorCode::kInternal);
  }
}

}  // namespace

void agree_or_throw(comm::Group& group, const std::exception_ptr& error, const std::string& what) {
  const double mine = category_of(error);
  const std::vector<double> all = group.all_gather(&mine, 1);
  if (error) std::rethrow_exception(error);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r] >= 0.0) {
      throw Error(static_cast<ErrorCode>(static_cast<int>(all[r])),
                  what + " failed on another rank (rank " + std::to_string(r) +
                      "; its own error message names the cause)");
    }
  }
}

}  // namespace sluice::runtime
