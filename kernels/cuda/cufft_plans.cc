#include "kernels/cuda/cufft_plans.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

const char* status_name(cufftResult status) {
  switch (status) {
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    default: return "see cufft.h";
  }
}

}  // namespace

void check_cufft(cufftResult status, const char* what) {
  if (status == CUFFT_SUCCESS) return;
  throw Error(ErrorCode::kCuda, std::string(what) + " failed: cuFFT status " + std::to_string(static_cast<int>(status)) +
                                    " (" + status_name(status) + ")");
}

CufftPlans::~CufftPlans() {
  for (auto& entry : plans_) cufftDestroy(entry.second);
}

cufftHandle CufftPlans::get(cufftType type, const std::vector<long long>& n, long long batch) {
  const Key key{static_cast<int>(type), n, batch};
  const auto found = plans_.find(key);
  if (found != plans_.end()) return found->second;
  long long elements = batch;
  for (long long e : n) elements *= e;
  if (n.empty() || n.size() > 2 || batch < 1 || elements > (1LL << 31) - 1) {
    throw Error(ErrorCode::kInvalidArgument, "cuFFT plan: " + std::to_string(n.size()) + "-D transforms, batch " +
                                                 std::to_string(batch) + " (" + std::to_string(elements) +
                                                 " elements) are outside what a plan of this backend takes");
  }
  std::vector<int> extents(n.begin(), n.end());
  cufftHandle plan = 0;
  check_cufft(cufftPlanMany(&plan, static_cast<int>(extents.size()), extents.data(), nullptr, 1, 0, nullptr, 1, 0, type,
                            static_cast<int>(batch)),
              "cufftPlanMany");
  const cufftResult bound = cufftSetStream(plan, stream_);
  if (bound != CUFFT_SUCCESS) {
    cufftDestroy(plan);
    check_cufft(bound, "cufftSetStream");
  }
  plans_.emplace(key, plan);
  return plan;
}

}  // namespace sluice::kernels
