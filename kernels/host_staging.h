// Copies between a backend's memory and host buffers, by raw pointer, for transports that move device tensors
// through host memory (comm::StagedTransport: device -> host -> MPI -> host -> device). Kept apart from Backend's
// tensor-level to_host/from_host because a transport sees only float pointers and counts.
#pragma once

#include <cstdint>
#include <memory>

namespace sluice::kernels {

// A host buffer the backend copies to and from at full speed (pinned memory for CUDA).
class StagingBuffer {
 public:
  virtual ~StagingBuffer() = default;
  virtual float* data() = 0;
};

class HostStaging {
 public:
  virtual ~HostStaging() = default;
  virtual std::unique_ptr<StagingBuffer> allocate(int64_t count) = 0;
  // Both copies are complete when they return: MPI reads the host side right after a copy to the host, and
  // the staging buffer may be freed right after a copy to the device.
  virtual void copy_to_host(const float* device_source, float* host_destination, int64_t count) = 0;
  virtual void copy_to_device(const float* host_source, float* device_destination, int64_t count) = 0;
};

// The staging of backends whose tensors already live in host memory (the CPU backend): plain memcpy into
// ordinary heap buffers. Staging host memory costs two copies for nothing, but it runs the staged transport's
// whole path on a machine without a GPU, which is how that path is tested here.
HostStaging& host_memory_staging();

}  // namespace sluice::kernels
