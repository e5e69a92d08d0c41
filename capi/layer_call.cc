#include "capi/layer_call.h"

#include <cstddef>

#include "capi/sized_struct.h"
#include "capi/status.h"
#include "core/common/error.h"

namespace sluice::capi {
namespace {

thread_local const sluice_layer_call* g_current_call = nullptr;

// The first size-tagged version ends before `stream`: an older caller gets the shapes and no stream.
const SizedStruct kLayerCallStruct{"sluice_layer_call", "SLUICE_LAYER_CALL_INIT", offsetof(sluice_layer_call, stream)};

}  // namespace

LayerCallScope::LayerCallScope(const sluice_layer_call& call) : previous_(g_current_call) { g_current_call = &call; }

LayerCallScope::~LayerCallScope() { g_current_call = previous_; }

const sluice_layer_call* current_layer_call() { return g_current_call; }

}  // namespace sluice::capi

extern "C" sluice_status sluice_layer_call_info(sluice_layer_call* out) {
  return sluice::capi::guarded("sluice_layer_call_info", [&] {
    if (out == nullptr) throw sluice::Error(sluice::ErrorCode::kInvalidArgument, "output pointer is NULL");
    const sluice_layer_call* current = sluice::capi::current_layer_call();
    if (current == nullptr) {
      sluice::capi::check_struct_size(out->struct_size, sluice::capi::kLayerCallStruct);
      throw sluice::Error(sluice::ErrorCode::kState,
                          "not inside a layer callback: call it from a custom layer's forward or backward callbacks");
    }
    sluice::capi::write_sized(*current, out, sluice::capi::kLayerCallStruct);
  });
}
