#include "core/comm/nccl_stream_event.h"

#include <string>

#include "core/common/error.h"

namespace sluice::comm {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(ErrorCode::kCuda, std::string(what) + " failed: " + cudaGetErrorString(status));
  }
}

}  // namespace

StreamEvent::StreamEvent() { check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate"); }

StreamEvent::~StreamEvent() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

void StreamEvent::record(cudaStream_t stream) { check(cudaEventRecord(event_, stream), "cudaEventRecord"); }

void StreamEvent::make_wait(cudaStream_t stream) const {
  check(cudaStreamWaitEvent(stream, event_, 0), "cudaStreamWaitEvent");
}

bool StreamEvent::done() const {
  const cudaError_t status = cudaEventQuery(event_);
  if (status == cudaErrorNotReady) return false;
  check(status, "cudaEventQuery");
  return true;
}

}  // namespace sluice::comm
