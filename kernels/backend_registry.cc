#include "kernels/backend_registry.h"

#include <map>
#include <mutex>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, BackendFactory>& registry() {
  static std::map<std::string, BackendFactory> r{
      {"cpu", [](const DeviceRequest&) -> Backend& { return cpu_backend(); }}};
  return r;
}

}  // namespace

bool register_backend(const std::string& device, BackendFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[device] = std::move(factory);
  return true;
}

std::vector<std::string> available_devices() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

Backend& backend_for(const DeviceRequest& request) {
  const std::string& device = request.device;
  BackendFactory factory;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(device);
    if (it != registry().end()) factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const std::string& name : available_devices()) known += (known.empty() ? "" : ", ") + name;
    throw Error(ErrorCode::kUnsupported, "device '" + device + "' is not available in this build (available: " +
                                             known + "; CUDA needs a build with --config=cuda)");
  }
  return factory(request);
}

}  // namespace sluice::kernels
