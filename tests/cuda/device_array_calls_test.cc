// The C API's device-array calls in a CUDA build (sluice.h, "Device arrays"; docs/GPU.md): a trainer fed device
// arrays through sluice_*_device gives bit for bit what a twin trainer fed the same values as host arrays gives
// (the arrays are staged through host memory on the caller's stream), and a host pointer passed where a device
// address belongs is refused with INVALID_ARGUMENT naming the argument, on every rank, after which both trainers
// still train. Part of pipeline_gpu_vs_cpu_test_bin (4 ranks, one stage each) so it adds no test target; skips
// without a device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/cuda/cuda_test_support.h"

namespace {

constexpr int kIn = 4, kOut = 2, kBatch = 8;

const char* const kConfig =
    "model:\n"
    "  inputs: 4\n"
    "  layers:\n"
    "    - {type: linear, outputs: 6}\n"
    "    - {type: tanh}\n"
    "    - {type: linear, outputs: 5}\n"
    "    - {type: linear, outputs: 2}\n"
    "pipeline: {stages: 4, schedule: 1f1b, microbatches: 4}\n"
    "optimizer: {type: sgd, lr: 0.1}\n"
    "data: {type: external, batch: 8}\n";

// A device copy of `host`, freed with the object.
struct DeviceArray {
  explicit DeviceArray(const std::vector<float>& host) : count(host.size()) {
    EXPECT_EQ(cudaMalloc(&data, count * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, host.data(), count * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(data); }
  std::vector<float> download() const {
    std::vector<float> host(count);
    EXPECT_EQ(cudaMemcpy(host.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  float* data = nullptr;
  size_t count;
};

sluice_trainer* started_trainer() {
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, kConfig, &t), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  return t;
}

std::vector<float> values(size_t count, float phase) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = std::sin(phase + 0.37f * static_cast<float>(i));
  return v;
}

TEST(DeviceArrayCalls, StageThroughTheHostBitForBitAndRefuseHostPointers) {
  SLUICE_SKIP_WITHOUT_CUDA_DEVICE();
  sluice_trainer* host = started_trainer();
  sluice_trainer* device = started_trainer();
  const std::vector<float> x = values(kBatch * kIn, 0.1f), y = values(kBatch * kOut, 0.7f);
  const DeviceArray dx(x), dy(y), dout(std::vector<float>(kBatch * kOut, 0.0f));
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  float host_loss = NAN, device_loss = NAN;
  for (int step = 0; step < 2; ++step) {
    ASSERT_EQ(sluice_train_step(host, x.data(), y.data(), kBatch, &host_loss), SLUICE_OK) << sluice_last_error();
    ASSERT_EQ(sluice_train_step_device(device, dx.data, dy.data, kBatch, &device_loss, stream), SLUICE_OK)
        << sluice_last_error();
    EXPECT_EQ(host_loss, device_loss) << "step " << step;
  }
  ASSERT_EQ(sluice_evaluate(host, x.data(), y.data(), kBatch, &host_loss), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_evaluate_device(device, dx.data, dy.data, kBatch, &device_loss, nullptr), SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(host_loss, device_loss);
  std::vector<float> predicted(kBatch * kOut);
  ASSERT_EQ(sluice_predict(host, x.data(), predicted.data(), kBatch), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_predict_device(device, dx.data, dout.data, kBatch, stream), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(dout.download(), predicted);
  ASSERT_EQ(sluice_submit_samples_device(device, dx.data, dy.data, kBatch, stream), SLUICE_OK) << sluice_last_error();
  int64_t held = 0;
  ASSERT_EQ(sluice_submitted_count(device, &held), SLUICE_OK);
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  EXPECT_EQ(held, static_cast<int64_t>(kBatch) * ranks);

  // Rank 0 (the first stage) reads inputs: a host array there is named, and every rank's call fails with it.
  EXPECT_EQ(sluice_train_step_device(device, x.data(), dy.data, kBatch, nullptr, stream),
            SLUICE_ERROR_INVALID_ARGUMENT);
  const std::string message = sluice_last_error();
  EXPECT_NE(message.find("inputs ("), std::string::npos) << message;
  EXPECT_NE(message.find("is host memory, not a CUDA device address"), std::string::npos) << message;
  ASSERT_EQ(sluice_train_step(host, x.data(), y.data(), kBatch, &host_loss), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_train_step_device(device, dx.data, dy.data, kBatch, &device_loss, stream), SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(host_loss, device_loss) << "the refused call changed nothing";
  cudaStreamDestroy(stream);
  sluice_trainer_destroy(device);
  sluice_trainer_destroy(host);
}

}  // namespace
