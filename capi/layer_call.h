// Which layer callback this thread is running (sluice_layer_call_info): CallbackLayer opens a LayerCallScope
// around each call of the application's forward/backward, and the C entry point reads it. Thread-local, because
// pipeline stages may run callbacks on several threads at once.
#pragma once

#include "capi/include/sluice/sluice.h"

namespace sluice::capi {

// Makes `call` (borrowed: it must outlive the scope) the current call of this thread until destroyed; scopes nest.
class LayerCallScope {
 public:
  explicit LayerCallScope(const sluice_layer_call& call);
  ~LayerCallScope();
  LayerCallScope(const LayerCallScope&) = delete;
  LayerCallScope& operator=(const LayerCallScope&) = delete;

 private:
  const sluice_layer_call* previous_;
};

// The current call of this thread, or nullptr outside any layer callback.
const sluice_layer_call* current_layer_call();

}  // namespace sluice::capi
