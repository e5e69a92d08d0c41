#include "kernels/device_request.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {

int device_for_local_rank(int local_rank, int gpus_on_node) {
  if (local_rank < 0) {
    throw Error(ErrorCode::kInvalidArgument, "placement: local_rank must be >= 0, got " + std::to_string(local_rank));
  }
  if (gpus_on_node < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "placement: gpus_on_node must be >= 0, got " + std::to_string(gpus_on_node));
  }
  if (gpus_on_node == 0) return -1;
  return local_rank % gpus_on_node;
}

}  // namespace sluice::kernels
