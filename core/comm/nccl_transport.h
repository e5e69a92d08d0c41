// Transport over NCCL point-to-point for device memory, on a communication stream apart from compute, so
// transfers overlap compute. Ordering against the compute stream (where the backend allocates, fills and frees
// tensors) uses CUDA events both ways, so the host does not wait for transfers (only, briefly, for NCCL to queue a
// call while it sets up a connection: NcclCommunicator::complete):
//   isend/irecv: event on compute -> comm stream waits -> ncclSend/ncclRecv -> done event on comm
//   wait():      the compute stream waits for the done event.
// NCCL matches point-to-point calls by issue order per peer pair, has no tags, and runs the calls queued on one
// stream one after another, a send blocking until its receive runs. So every transfer is issued the moment it
// is posted, in posting order, and the transport asks the executor to post in schedule order
// (receives_may_be_posted_early() is false): the lowering proves that order deadlock-free with blocking
// send/recv (core/schedule/rendezvous_dry_run.h). Issuing a receive ahead of an earlier send, or a send ahead
// of an earlier receive, can deadlock two neighbours once messages exceed NCCL's internal buffers.
// A transfer to this rank itself (peer == rank) is paired by tag and issued as one grouped ncclSend+ncclRecv,
// as NCCL requires for self-communication (the executor hands same-rank data over without a transport).
// Multi-rank use needs one GPU per rank (NCCL refuses two ranks on one GPU): see docs/GPU.md.
#pragma once

#include <cuda_runtime_api.h>

#include <limits>
#include <map>
#include <memory>

#include "core/comm/nccl_communicator.h"
#include "core/comm/transport.h"

namespace sluice::comm {

class NcclTransport : public Transport {
 public:
  // `compute_stream` is the backend's stream (CudaBackend::stream()) and `comm_stream` the stream every NCCL
  // call of this rank is queued on (CudaBackend::communication_stream(): one stream for all communicators keeps
  // their kernels from running concurrently, which NCCL warns can deadlock). All must outlive the transport.
  NcclTransport(NcclCommunicator& communicator, cudaStream_t compute_stream, cudaStream_t comm_stream);
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  int rank() const override { return communicator_.rank(); }
  int size() const override { return communicator_.size(); }
  std::unique_ptr<Request> isend(const float* data, int64_t count, int peer, int tag) override;
  std::unique_ptr<Request> irecv(float* data, int64_t count, int peer, int tag) override;
  bool receives_may_be_posted_early() const override { return false; }  // said explicitly: the rule matters here
  // NCCL has no tags: they only pair self-transfers here, so any int will do.
  int max_tag() const override { return std::numeric_limits<int>::max(); }

  // Implementation detail shared with the request objects in nccl_transport.cc.
  struct Transfer;

 private:
  friend class NcclRequest;
  void issue(Transfer& transfer);
  void issue_self_pair(Transfer& send, Transfer& recv);
  void check_peer(const char* op, int64_t count, int peer) const;

  NcclCommunicator& communicator_;
  cudaStream_t compute_stream_;
  cudaStream_t comm_stream_;
  // Self-transfers waiting for their partner, by tag.
  std::map<int, std::shared_ptr<Transfer>> unmatched_self_sends_;
  std::map<int, std::shared_ptr<Transfer>> unmatched_self_recvs_;
};

}  // namespace sluice::comm
