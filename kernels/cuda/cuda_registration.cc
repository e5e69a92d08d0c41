// Makes `device: cuda` resolve through kernels::backend_for. Linked with alwayslink so the static initializer
// survives even though nothing references this file's symbols. Registration creates no context: the backend
// (and its "no CUDA device" error) comes only when a run asks for "cuda".
#include "kernels/backend_registry.h"
#include "kernels/cuda/cuda_backend.h"

namespace sluice::kernels {
namespace {

const bool registered =
    register_backend("cuda", [](const DeviceRequest& request) -> Backend& { return cuda_backend(request.local_rank); });

}  // namespace
}  // namespace sluice::kernels
