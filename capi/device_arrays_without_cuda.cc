// The device-array calls (sluice.h, "Device arrays") in a build without CUDA: each refuses with UNSUPPORTED without
// reading its arguments. No agreement is needed for a collective one: the refusal depends only on how this library
// was built, which is the same on every rank, so every rank refuses identically and none enters a collective.
#include <string>

#include "capi/include/sluice/sluice.h"
#include "capi/status.h"

namespace {

sluice_status refuse(const char* function, const char* host_twin) {
  return sluice::capi::fail(SLUICE_ERROR_UNSUPPORTED,
                            std::string(function) +
                                ": this library was built without CUDA, so it cannot read device arrays; build Sluice "
                                "with --config=cuda (docs/GPU.md), or pass host arrays to " + host_twin);
}

}  // namespace

extern "C" {

sluice_status sluice_train_step_device(sluice_trainer*, const float*, const float*, int64_t, float*, void*) {
  return refuse("sluice_train_step_device", "sluice_train_step");
}

sluice_status sluice_submit_samples_device(sluice_trainer*, const float*, const float*, int64_t, void*) {
  return refuse("sluice_submit_samples_device", "sluice_submit_samples");
}

sluice_status sluice_predict_device(sluice_trainer*, const float*, float*, int64_t, void*) {
  return refuse("sluice_predict_device", "sluice_predict");
}

sluice_status sluice_evaluate_device(sluice_trainer*, const float*, const float*, int64_t, float*, void*) {
  return refuse("sluice_evaluate_device", "sluice_evaluate");
}

sluice_status sluice_model_predict_device(sluice_model*, const float*, float*, int64_t, void*) {
  return refuse("sluice_model_predict_device", "sluice_model_predict");
}

}  // extern "C"
