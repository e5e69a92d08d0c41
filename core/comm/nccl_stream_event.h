// A CUDA event owned by one object: how NcclTransport orders its communication stream against the compute
// stream and how its requests report completion.
#pragma once

#include <cuda_runtime_api.h>

namespace sluice::comm {

class StreamEvent {
 public:
  StreamEvent();  // timing disabled: these events only order streams
  ~StreamEvent();
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;

  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream);
  // Makes `stream` wait (on the device, not the host) for the last record.
  void make_wait(cudaStream_t stream) const;
  bool done() const;  // never blocks

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace sluice::comm
