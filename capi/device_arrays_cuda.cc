// The device-array calls (sluice.h, "Device arrays") in a build with CUDA: the caller's device arrays are staged
// through host memory on the caller's stream and the host twin (sluice_train_step, ...) runs on the copies. The path
// without a host round trip (the first and last stages reading the caller's arrays on the GPU) is not built: it
// needs a GPU to verify (docs/GPU.md, "Device arrays from the host").
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "capi/include/sluice/sluice.h"
#include "capi/status.h"
#include "kernels/cuda/caller_arrays.h"

namespace {

// Host copies of one call's device arrays, all copied on the caller's stream.
class Staging {
 public:
  explicit Staging(void* stream) : stream_(stream) {}

  // A host copy of `count` floats at `device` (NULL stays NULL). With count <= 0 nothing is copied and a non-NULL
  // array gets a non-NULL host stand-in, so the host twin refuses the count exactly as it would with host arrays.
  const float* input(const float* device, int64_t count, const char* argument) {
    if (device == nullptr) return nullptr;
    sluice::kernels::require_device_address(device, argument);
    std::vector<float>& host = buffers_.emplace_back(count > 0 ? static_cast<size_t>(count) : 1);
    if (count > 0) {
      sluice::kernels::copy_device_to_host(host.data(), device, count, stream_,
                                           std::string("copying ") + argument + " to the host");
    }
    return host.data();
  }

  // A host buffer of `count` floats whose contents finish() copies to `device` (NULL stays NULL).
  float* output(float* device, int64_t count, const char* argument) {
    if (device == nullptr) return nullptr;
    sluice::kernels::require_device_address(device, argument);
    std::vector<float>& host = buffers_.emplace_back(count > 0 ? static_cast<size_t>(count) : 1);
    if (count > 0) outputs_.push_back({device, host.data(), count, argument});
    return host.data();
  }

  // Waits for the copies to the host (after the caller's work queued before them on the stream).
  void wait() { sluice::kernels::synchronize_caller_stream(stream_); }

  // Copies the outputs to the caller's device arrays and waits for them.
  void finish() {
    for (const Output& o : outputs_) {
      sluice::kernels::copy_host_to_device(o.device, o.host, o.count, stream_,
                                           std::string("copying ") + o.argument + " to the device");
    }
    wait();
  }

 private:
  struct Output {
    float* device;
    const float* host;  // in buffers_
    int64_t count;
    const char* argument;
  };
  void* stream_;  // a cudaStream_t
  std::deque<std::vector<float>> buffers_;
  std::vector<Output> outputs_;
};

// What a trainer's call needs to size its copies; false when the handle is bad or not started (the host twin then
// returns its own error before reading any array).
struct Widths {
  int64_t in = 0, out = 0;
  bool inputs = false, targets = false;  // this rank reads them (sluice_layout.needs_inputs / needs_targets)
};
bool widths_of(const sluice_trainer* t, Widths& widths) {
  sluice_layout layout = SLUICE_LAYOUT_INIT;
  if (sluice_trainer_layout(t, &layout) != SLUICE_OK) return false;
  if (sluice_trainer_features(t, &widths.in, &widths.out) != SLUICE_OK) return false;
  widths.inputs = layout.needs_inputs != 0;
  widths.targets = layout.needs_targets != 0;
  return true;
}

// A collective device-array call: `stage` (local checks and copies to the host) on this rank, then `call` (the
// host twin, collective), then the copies back. A local failure while staging is handed to the other ranks' call of
// the host twin `twin` as sluice_join_with_error does, so none of them is left waiting in it.
template <typename Stage, typename Call>
sluice_status collective(sluice_trainer* t, const char* function, const char* twin, Staging& staging, Stage&& stage,
                         Call&& call) {
  const sluice_status staged = sluice::capi::guarded(function, [&] {
    stage();
    staging.wait();
  });
  if (staged != SLUICE_OK) {
    const std::string message = sluice_last_error();
    return sluice_join_with_error(t, twin, staged, message.c_str());
  }
  const sluice_status status = call();
  if (status != SLUICE_OK) return status;
  return sluice::capi::guarded(function, [&] { staging.finish(); });
}

// Rows x width as a copy's element count; a negative or overflowing product copies nothing (the twin refuses it).
int64_t elements(int64_t rows, int64_t width) {
  if (rows <= 0 || width <= 0 || rows > INT64_MAX / width) return 0;
  return rows * width;
}

// sluice_train_step_device and sluice_evaluate_device: inputs and targets in (those this rank reads), a host loss
// out, then `host`, the host twin named `twin`.
using InputsTargetsLoss = sluice_status (*)(sluice_trainer*, const float*, const float*, int64_t, float*);
sluice_status inputs_targets_loss(sluice_trainer* t, const float* inputs, const float* targets, int64_t batch,
                                  float* loss, void* stream, const char* function, const char* twin,
                                  InputsTargetsLoss host) {
  Widths w;
  if (!widths_of(t, w)) return host(t, nullptr, nullptr, batch, loss);
  Staging staging(stream);
  const float* x = nullptr;
  const float* y = nullptr;
  return collective(
      t, function, twin, staging,
      [&] {
        x = w.inputs ? staging.input(inputs, elements(batch, w.in), "inputs") : nullptr;
        y = w.targets ? staging.input(targets, elements(batch, w.out), "targets") : nullptr;
      },
      [&] { return host(t, x, y, batch, loss); });
}

}  // namespace

extern "C" {

sluice_status sluice_train_step_device(sluice_trainer* t, const float* inputs, const float* targets, int64_t batch,
                                       float* loss, void* stream) {
  return inputs_targets_loss(t, inputs, targets, batch, loss, stream, "sluice_train_step_device", "sluice_train_step",
                             sluice_train_step);
}

sluice_status sluice_submit_samples_device(sluice_trainer* t, const float* inputs, const float* targets,
                                           int64_t count, void* stream) {
  Widths w;
  if (!widths_of(t, w)) return sluice_submit_samples(t, nullptr, nullptr, count);
  Staging staging(stream);
  const float* x = nullptr;
  const float* y = nullptr;
  return collective(
      t, "sluice_submit_samples_device", "sluice_submit_samples", staging,
      [&] {  // every rank submits its own samples, whatever its stage
        x = staging.input(inputs, elements(count, w.in), "inputs");
        y = staging.input(targets, elements(count, w.out), "targets");
      },
      [&] { return sluice_submit_samples(t, x, y, count); });
}

sluice_status sluice_predict_device(sluice_trainer* t, const float* inputs, float* outputs, int64_t batch,
                                    void* stream) {
  Widths w;
  if (!widths_of(t, w)) return sluice_predict(t, nullptr, nullptr, batch);
  Staging staging(stream);
  const float* x = nullptr;
  float* y = nullptr;
  return collective(
      t, "sluice_predict_device", "sluice_predict", staging,
      [&] {
        x = w.inputs ? staging.input(inputs, elements(batch, w.in), "inputs") : nullptr;
        y = staging.output(outputs, elements(batch, w.out), "outputs");  // filled on every rank
      },
      [&] { return sluice_predict(t, x, y, batch); });
}

sluice_status sluice_evaluate_device(sluice_trainer* t, const float* inputs, const float* targets, int64_t batch,
                                     float* loss, void* stream) {
  return inputs_targets_loss(t, inputs, targets, batch, loss, stream, "sluice_evaluate_device", "sluice_evaluate",
                             sluice_evaluate);
}

sluice_status sluice_model_predict_device(sluice_model* m, const float* inputs, float* outputs, int64_t batch,
                                          void* stream) {
  int64_t in = 0, out = 0;
  if (sluice_model_features(m, &in, &out) != SLUICE_OK) return sluice_model_predict(m, nullptr, nullptr, batch);
  Staging staging(stream);
  const float* x = nullptr;
  float* y = nullptr;
  const sluice_status staged = sluice::capi::guarded("sluice_model_predict_device", [&] {
    x = staging.input(inputs, elements(batch, in), "inputs");
    y = staging.output(outputs, elements(batch, out), "outputs");
    staging.wait();
  });
  if (staged != SLUICE_OK) return staged;
  const sluice_status status = sluice_model_predict(m, x, y, batch);
  if (status != SLUICE_OK) return status;
  return sluice::capi::guarded("sluice_model_predict_device", [&] { staging.finish(); });
}

}  // extern "C"
