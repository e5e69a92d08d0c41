// Maps the config's `device:` name to a compute backend. The CPU backend is always there; other backends
// (CUDA) register themselves from their own library when it is linked in (Bazel --config=cuda), so adding a
// device adds files and a dependency, never a branch in the trainer or executor.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/device_request.h"

namespace sluice::kernels {

// Returns the backend for a request of its device; a factory may keep one backend per process and hand it to
// every later request.
using BackendFactory = std::function<Backend&(const DeviceRequest&)>;

// Called from a static initializer of a backend library. Returns true so it can initialize a static bool.
bool register_backend(const std::string& device, BackendFactory factory);

// The backend for `request.device` ("cpu", "cuda", ...) on the unit its local_rank picks. Error(kUnsupported)
// naming the device and the devices this build has when it is unknown.
Backend& backend_for(const DeviceRequest& request);

std::vector<std::string> available_devices();

}  // namespace sluice::kernels
