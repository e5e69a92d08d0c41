// Whether the CPU backend's large products may go to oneDNN (kernels/cpu/onednn_gemm.h), from the environment
// variable SLUICE_ONEDNN_GEMM, read once per process:
//   auto  (unset or empty) on CPUs with AVX-512, where the route was measured; OpenBLAS elsewhere
//   on    on any CPU oneDNN has kernels for, so tests and CI cover the route and the thread blocks everywhere
//   off   never: every product on OpenBLAS (to compare, or to rule the route out when chasing a problem)
// It changes which library computes a product, so a run and its resume should see the same setting.
#pragma once

namespace sluice::kernels {

enum class OnednnRoute { kAuto, kOn, kOff };

// The setting for this process. An unknown value is an Error (kInvalidArgument) naming the variable, the value
// and the valid ones, at the first product that asks.
OnednnRoute onednn_route_setting();

// Parses one value of the variable (exposed for tests); same error as above.
OnednnRoute parse_onednn_route(const char* text);

}  // namespace sluice::kernels
