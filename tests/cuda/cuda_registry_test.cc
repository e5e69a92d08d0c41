// Runs on any machine under --config=cuda: linking the registration makes "cuda" a known device, and asking
// for it without a GPU is an Error(kCuda) that says why (what a user sees with `device: cuda` on a CPU node).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/common/error.h"
#include "kernels/backend_registry.h"
#include "kernels/cuda/cuda_device.h"

namespace sluice::kernels {
namespace {

TEST(CudaRegistry, CudaIsAnAvailableDeviceName) {
  const auto devices = available_devices();
  EXPECT_NE(std::find(devices.begin(), devices.end(), "cuda"), devices.end());
}

TEST(CudaRegistry, ResolvesToAGpuBackendOrExplainsWhyNot) {
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty()) {
    EXPECT_EQ(backend_for({"cuda", 0}).device(), Device::kCuda);
    return;
  }
  try {
    backend_for({"cuda", 0});
    FAIL() << "backend_for({\"cuda\", 0}) succeeded although " << reason;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCuda);
    EXPECT_NE(std::string(e.what()).find("no CUDA device: " + reason), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::kernels
