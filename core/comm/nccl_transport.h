// Transport over NCCL point-to-point for device memory, on a dedicated communication stream so transfers
// overlap compute. Ordering against the compute stream (where the backend allocates, fills and frees
// tensors) uses CUDA events both ways, so no host synchronisation is needed:
//   start:  event on compute -> comm stream waits -> ncclSend/ncclRecv (one NCCL group) -> done event on comm
//   wait(): the compute stream waits for the done event; the host does not block.
// NCCL matches point-to-point calls by issue order per peer pair and has no tags, and all calls of one
// communicator run in issue order. Two consequences shape this class:
//   - a send is issued at isend(); a receive is issued only at its first wait()/test(). Receives that the
//     executor posts ahead of its own sends would otherwise sit in front of those sends on the NCCL queue and
//     two neighbouring ranks could each wait for the other's send (a deadlock the MPI transport cannot have).
//     Sluice's lowering gives every rank pair one global message order, so issue orders still match.
//   - a transfer to this rank itself (peer == rank) is paired by tag and issued as one grouped
//     ncclSend+ncclRecv, as NCCL requires for self-communication.
// Multi-rank use needs one GPU per rank (NCCL refuses two ranks on one GPU): see docs/GPU.md.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>

#include "core/comm/nccl_communicator.h"
#include "core/comm/transport.h"

namespace sluice::comm {

class NcclTransport : public Transport {
 public:
  // `compute_stream` is the backend's stream (CudaBackend::stream()); both must outlive the transport.
  NcclTransport(NcclCommunicator& communicator, cudaStream_t compute_stream);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  int rank() const override { return communicator_.rank(); }
  int size() const override { return communicator_.size(); }
  std::unique_ptr<Request> isend(const float* data, int64_t count, int peer, int tag) override;
  std::unique_ptr<Request> irecv(float* data, int64_t count, int peer, int tag) override;

  // Implementation detail shared with the request objects in nccl_transport.cc.
  struct Transfer;

 private:
  friend class NcclRequest;
  void issue(Transfer& transfer);
  void issue_self_pair(Transfer& send, Transfer& recv);
  void check_peer(const char* op, int64_t count, int peer) const;

  NcclCommunicator& communicator_;
  cudaStream_t compute_stream_;
  cudaStream_t comm_stream_ = nullptr;
  // Self-transfers waiting for their partner, by tag.
  std::map<int, std::shared_ptr<Transfer>> unmatched_self_sends_;
  std::map<int, std::shared_ptr<Transfer>> unmatched_self_recvs_;
};

}  // namespace sluice::comm
