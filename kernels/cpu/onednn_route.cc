#include "kernels/cpu/onednn_route.h"

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

}  // namespace sluice::kernels
