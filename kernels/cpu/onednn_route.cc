#include "kernels/cpu/onednn_route.h"

#include <strings.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

constexpr const char* kVariable = "SLUICE_ONEDNN_GEMM";

struct RouteName {
  const char* name;
  OnednnRoute route;
};
constexpr RouteName kRouteNames[] = {{"auto", OnednnRoute::kAuto}, {"on", OnednnRoute::kOn}, {"off", OnednnRoute::kOff}};

// OpenBLAS's x86-64 cores whose single-precision kernels use neither AVX2 nor FMA (SSE2/SSE3, or AVX without FMA
// for Sandybridge): on a CPU with AVX2 or AVX-512 they are what OpenBLAS falls back to when it does not know the
// model, and oneDNN's kernels for the same CPU are several times faster. Real CPUs of these cores lack AVX2, so the
// route also asks oneDNN for AVX2 (gemm_route_for).
constexpr const char* kFallbackCores[] = {"prescott", "core2",       "penryn",  "dunnington", "nehalem",
                                          "atom",     "sandybridge", "opteron", "opteron_sse3", "barcelona",
                                          "bobcat",   "bulldozer",   "piledriver", "steamroller"};

// Below this many multiply-adds the per-call cost of a matmul primitive (argument set-up, brgemm dispatch) is not
// repaid where OpenBLAS runs its own AVX-512 kernels; the test models' small layers stay on OpenBLAS there.
constexpr int64_t kMinMultiplyAdds = int64_t{1} << 20;
// A weight narrower or shallower than this has too little to gain from not being packed.
constexpr int64_t kMinWeightSide = 128;

struct RouteText {
  GemmRoute route;
  const char* text;
};
constexpr RouteText kRouteTexts[] = {{GemmRoute::kNone, "OpenBLAS"},
                                     {GemmRoute::kLarge, "oneDNN for large weight products, else OpenBLAS"},
                                     {GemmRoute::kAll, "oneDNN"}};

}  // namespace

OnednnRoute parse_onednn_route(const char* text) {
  if (text == nullptr || *text == '\0') return OnednnRoute::kAuto;
  std::string valid;
  for (const RouteName& each : kRouteNames) {
    if (std::strcmp(text, each.name) == 0) return each.route;
    valid += std::string(valid.empty() ? "" : ", ") + each.name;
  }
  throw Error(ErrorCode::kInvalidArgument,
              std::string("environment variable ") + kVariable + "=\"" + text + "\" is not one of " + valid);
}

OnednnRoute onednn_route_setting() {
  static const OnednnRoute setting = parse_onednn_route(std::getenv(kVariable));
  return setting;
}

bool openblas_core_is_fallback(const char* corename) {
  if (corename == nullptr) return false;
  for (const char* each : kFallbackCores) {
    if (strcasecmp(corename, each) == 0) return true;
  }
  return false;
}

GemmRoute gemm_route_for(OnednnRoute setting, const char* openblas_core, bool onednn_avx2, bool onednn_avx512) {
  switch (setting) {
    case OnednnRoute::kOn:
      return GemmRoute::kAll;
    case OnednnRoute::kOff:
      return GemmRoute::kNone;
    case OnednnRoute::kAuto:
      break;
  }
  if (onednn_avx2 && openblas_core_is_fallback(openblas_core)) return GemmRoute::kAll;
  return onednn_avx512 ? GemmRoute::kLarge : GemmRoute::kNone;
}

bool gemm_route_covers(GemmRoute route, bool transpose_a, bool /*transpose_b*/, int64_t m, int64_t n, int64_t k) {
  switch (route) {
    case GemmRoute::kAll:
      return true;
    case GemmRoute::kNone:
      return false;
    case GemmRoute::kLarge:
      break;
  }
  // dy^T x stays on OpenBLAS's own AVX-512 kernels, which are as fast there (docs/BUILD_SETTINGS.md).
  return !transpose_a && n >= kMinWeightSide && k >= kMinWeightSide && m * n * k >= kMinMultiplyAdds;
}

const char* gemm_route_text(GemmRoute route) {
  for (const RouteText& each : kRouteTexts) {
    if (each.route == route) return each.text;
  }
  return "?";
}

}  // namespace sluice::kernels
