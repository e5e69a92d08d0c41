// A 2-D row-major fp32 tensor [rows][cols]: rows are the samples of a micro-batch, cols the features.
// The memory lives in a `Buffer` so that a device backend adds its own buffer type in new files without
// changing this one (CUDA: kernels/cuda/cuda_buffer.h). A Tensor owns its buffer: copying deep-copies, moving
// transfers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace sluice::kernels {

enum class Device { kHost, kCuda };

// Storage behind a Tensor. Implementations decide where the floats live.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual float* data() = 0;
  virtual Device device() const = 0;
  virtual std::unique_ptr<Buffer> clone() const = 0;
};

// Host memory: zero-initialised, or left as allocated for outputs an op overwrites entirely (Backend::empty).
// Host memory aligned to 64 bytes (a cache line, an AVX-512 register). oneDNN's JIT kernels assume it: its
// resampling stores a large output with non-temporal stores, which fault on an address that is not aligned to the
// register (seen with oneDNN 2.6 from 2^25 output elements; tests/kernels:cpu_sampling_test).
inline constexpr std::align_val_t kHostAlignment{64};

struct AlignedFloatsDelete {
  void operator()(float* values) const { ::operator delete[](values, kHostAlignment); }
};

class HostBuffer : public Buffer {
 public:
  explicit HostBuffer(size_t count, bool zero_filled = true)
      : count_(count),
        values_(zero_filled ? new (kHostAlignment) float[count]() : new (kHostAlignment) float[count]) {}
  float* data() override { return values_.get(); }
  Device device() const override { return Device::kHost; }
  std::unique_ptr<Buffer> clone() const override {
    auto copy = std::make_unique<HostBuffer>(count_, false);
    std::copy(values_.get(), values_.get() + count_, copy->values_.get());
    return copy;
  }

 private:
  size_t count_;
  std::unique_ptr<float[], AlignedFloatsDelete> values_;
};

class Tensor {
 public:
  Tensor() = default;  // empty: 0 x 0, no buffer
  Tensor(int64_t rows, int64_t cols, std::unique_ptr<Buffer> buffer);

  // Host tensor filled with zeros; what the CPU backend's `zeros` returns.
  static Tensor host(int64_t rows, int64_t cols);
  // Host tensor with unspecified contents, for an output that is written in full before it is read
  // (the CPU backend's `empty`).
  static Tensor host_uninitialized(int64_t rows, int64_t cols);
  // Host tensor holding a copy of `values` (row-major, rows*cols of them); for tests and data loading.
  static Tensor host_from(int64_t rows, int64_t cols, const std::vector<float>& values);

  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor() = default;

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  size_t bytes() const { return static_cast<size_t>(size()) * sizeof(float); }
  bool empty() const { return size() == 0; }
  Device device() const { return buffer_ ? buffer_->device() : Device::kHost; }

  // Cached at construction: a buffer's memory never moves, and a plain load (instead of a virtual call per
  // access) lets element loops vectorize.
  float* data() { return data_; }
  const float* data() const { return data_; }

  // Host tensors only: element access for tests and small host-side code.
  float& at(int64_t row, int64_t col) { return data()[row * cols_ + col]; }
  float at(int64_t row, int64_t col) const { return data()[row * cols_ + col]; }
  std::vector<float> to_vector() const;

 private:
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  std::unique_ptr<Buffer> buffer_;
  float* data_ = nullptr;  // buffer_->data(), or nullptr without a buffer
};

}  // namespace sluice::kernels
