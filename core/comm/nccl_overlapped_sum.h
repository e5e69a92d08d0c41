// In-place sums of device buffers over an NCCL communicator (ncclAllReduce), run on the communication stream
// so they overlap compute. Ordering against the compute stream uses CUDA events both ways, as
// NcclTransport does: start() makes the sums wait for what the compute stream has queued so far (the
// gradients), finish() makes the compute stream wait for the sums. The host never blocks.
// Every rank of the communicator must start its sums in the same order (NCCL matches collectives by order).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "core/comm/nccl_communicator.h"
#include "core/comm/nccl_stream_event.h"

namespace sluice::comm {

class NcclOverlappedSum {
 public:
  struct Buffer {
    float* data;  // device memory
    int64_t count;
  };

  // All must outlive this object. `comm_stream` is the one every NCCL call of this rank goes to
  // (CudaBackend::communication_stream()), shared with the pipeline's NcclTransport: NCCL kernels of two
  // communicators running concurrently can deadlock, queued on one stream they run in issue order, and every
  // replica issues its sums at the same place in its (identical) action list.
  NcclOverlappedSum(NcclCommunicator& communicator, cudaStream_t compute_stream, cudaStream_t comm_stream);
  NcclOverlappedSum(const NcclOverlappedSum&) = delete;
  NcclOverlappedSum& operator=(const NcclOverlappedSum&) = delete;

  // Queues one grouped ncclAllReduce (sum, in place) of every buffer, after the compute stream's queued work.
  void start(const std::vector<Buffer>& buffers);
  // The compute stream waits for every sum started so far.
  void finish();

 private:
  NcclCommunicator& communicator_;
  cudaStream_t compute_stream_;
  cudaStream_t comm_stream_;
  StreamEvent inputs_ready_;  // recorded on the compute stream at each start()
  StreamEvent sums_done_;     // recorded on the comm stream after each start()'s sums
  bool pending_ = false;      // a start() since the last finish()
};

}  // namespace sluice::comm
