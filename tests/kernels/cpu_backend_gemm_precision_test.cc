// The CPU backend as the trainer sees it through Backend&: it multiplies in fp32 only, so the config's
// gemm_precision must be fp32 there and anything else is refused by name rather than silently ignored.
#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

TEST(CpuBackendGemmPrecision, StartsInFp32AndAcceptsFp32) {
  CpuBackend cpu;
  Backend& backend = cpu;
  EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32);
  EXPECT_NO_THROW(backend.set_gemm_precision(GemmPrecision::kFp32));
  EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32);
}

TEST(CpuBackendGemmPrecision, RefusesTf32AndBf16NamingThePrecisionAndDevice) {
  CpuBackend cpu;
  Backend& backend = cpu;
  for (GemmPrecision precision : {GemmPrecision::kTf32, GemmPrecision::kBf16}) {
    const std::string name = gemm_precision_name(precision);
    try {
      backend.set_gemm_precision(precision);
      FAIL() << name << " was accepted by the CPU backend, which computes GEMMs in fp32 only";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
      EXPECT_EQ(std::string(e.what()), "gemm_precision: " + name +
                                           " is not available on device cpu; the CPU backend computes GEMMs in fp32");
    }
    EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32) << "a refused " << name << " must leave fp32 in place";
  }
}

// The process-wide instance the registry hands out for `device: cpu` behaves the same.
TEST(CpuBackendGemmPrecision, ProcessWideInstanceRefusesBf16) {
  EXPECT_THROW(cpu_backend().set_gemm_precision(GemmPrecision::kBf16), Error);
  EXPECT_NO_THROW(cpu_backend().set_gemm_precision(GemmPrecision::kFp32));
}

}  // namespace
}  // namespace sluice::kernels
