#include "core/comm/nccl_overlapped_sum.h"

namespace sluice::comm {

NcclOverlappedSum::NcclOverlappedSum(NcclCommunicator& communicator, cudaStream_t compute_stream,
                                     cudaStream_t comm_stream)
    : communicator_(communicator), compute_stream_(compute_stream), comm_stream_(comm_stream) {}

void NcclOverlappedSum::start(const std::vector<Buffer>& buffers) {
  // The sums read what the compute stream wrote (the last weight gradients): wait for it on the device.
  inputs_ready_.record(compute_stream_);
  inputs_ready_.make_wait(comm_stream_);
  // One group: NCCL fuses the launches, and a failure leaves no half-issued sequence behind.
  NcclGroup group(communicator_, "ncclGroupStart/End (gradient sums)");
  for (const Buffer& buffer : buffers) {
    if (buffer.count == 0) continue;
    communicator_.all_reduce_sum(buffer.data, buffer.count, comm_stream_);
  }
  group.end();
  // Re-recording after each start: an event's wait covers everything recorded before it on the stream, so
  // one event marks the end of every sum started so far.
  sums_done_.record(comm_stream_);
  pending_ = true;
}

void NcclOverlappedSum::finish() {
  if (!pending_) return;
  sums_done_.make_wait(compute_stream_);
  pending_ = false;
}

}  // namespace sluice::comm
