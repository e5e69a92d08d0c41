#include "kernels/host_staging.h"

#include <cstring>
#include <vector>

namespace sluice::kernels {
namespace {

class HeapBuffer : public StagingBuffer {
 public:
  explicit HeapBuffer(int64_t count) : values_(static_cast<size_t>(count)) {}
  float* data() override { return values_.data(); }

 private:
  std::vector<float> values_;
};

class HostMemoryStaging : public HostStaging {
 public:
  std::unique_ptr<StagingBuffer> allocate(int64_t count) override { return std::make_unique<HeapBuffer>(count); }
  void copy_to_host(const float* source, float* destination, int64_t count) override {
    if (count > 0) std::memcpy(destination, source, static_cast<size_t>(count) * sizeof(float));
  }
  void copy_to_device(const float* source, float* destination, int64_t count) override {
    if (count > 0) std::memcpy(destination, source, static_cast<size_t>(count) * sizeof(float));
  }
};

}  // namespace

HostStaging& host_memory_staging() {
  static HostMemoryStaging staging;  // stateless: one instance serves every caller and thread
  return staging;
}

}  // namespace sluice::kernels
