#include "core/comm/nccl_transport.h"

#include <string>

#include "core/comm/nccl_stream_event.h"
#include "core/common/error.h"

namespace sluice::comm {

struct NcclTransport::Transfer {
  bool is_send = false;
  void* data = nullptr;  // const for sends; NCCL's API takes const void* there
  int64_t count = 0;
  int peer = 0;
  int tag = 0;
  bool issued = false;
  StreamEvent done;  // recorded on the comm stream after the NCCL call
};

class NcclRequest : public Request {
 public:
  NcclRequest(NcclTransport& transport, std::shared_ptr<NcclTransport::Transfer> transfer)
      : transport_(transport), transfer_(std::move(transfer)) {}

  ~NcclRequest() override {
    // An unmatched self-transfer must not be paired later with a buffer that no longer exists.
    if (!transfer_->issued && transfer_->peer == transport_.rank()) {
      auto& unmatched =
          transfer_->is_send ? transport_.unmatched_self_sends_ : transport_.unmatched_self_recvs_;
      auto it = unmatched.find(transfer_->tag);
      if (it != unmatched.end() && it->second == transfer_) unmatched.erase(it);
    }
    // A transfer dropped without wait() (a failed step): its buffer is freed on the compute stream, which must
    // not run ahead of NCCL still reading or writing it.
    if (transfer_->issued && !waited_) {
      try {
        transfer_->done.make_wait(transport_.compute_stream_);
      } catch (const Error&) {
        // the device is failing; the error that led here is already being reported
      }
    }
  }

  void wait() override {
    if (!issued()) {
      throw Error(ErrorCode::kInternal, std::string("NcclTransport: waiting on a ") +
                                            (transfer_->is_send ? "send to" : "receive from") +
                                            " this rank itself (tag " + std::to_string(transfer_->tag) +
                                            ") whose matching " + (transfer_->is_send ? "receive" : "send") +
                                            " was never posted; it would never complete");
    }
    transfer_->done.make_wait(transport_.compute_stream_);
    waited_ = true;
  }

  bool test() override {
    if (issued() && transfer_->done.done()) waited_ = true;  // finished on the device: nothing left to wait for
    return waited_;
  }

 private:
  // False only for a self-transfer still waiting for its partner: every other transfer is issued when posted.
  bool issued() const { return transfer_->issued; }

  NcclTransport& transport_;
  std::shared_ptr<NcclTransport::Transfer> transfer_;
  bool waited_ = false;  // the compute stream already waits for the transfer, or it has finished
};

NcclTransport::NcclTransport(NcclCommunicator& communicator, cudaStream_t compute_stream, cudaStream_t comm_stream)
    : communicator_(communicator), compute_stream_(compute_stream), comm_stream_(comm_stream) {}

void NcclTransport::check_peer(const char* op, int64_t count, int peer) const {
  if (peer < 0 || peer >= size()) {
    throw Error(ErrorCode::kInvalidArgument, std::string("NcclTransport::") + op + ": peer " + std::to_string(peer) +
                                                 " is outside [0, " + std::to_string(size()) + ")");
  }
  if (count < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("NcclTransport::") + op + ": negative count " + std::to_string(count));
  }
}

void NcclTransport::issue(Transfer& transfer) {
  // The buffer was allocated and written on the compute stream: the comm stream starts after that work.
  StreamEvent ready;
  ready.record(compute_stream_);
  ready.make_wait(comm_stream_);
  if (transfer.is_send) {
    communicator_.send(static_cast<const float*>(transfer.data), transfer.count, transfer.peer, comm_stream_,
                       "ncclSend");
  } else {
    communicator_.recv(static_cast<float*>(transfer.data), transfer.count, transfer.peer, comm_stream_, "ncclRecv");
  }
  transfer.done.record(comm_stream_);
  transfer.issued = true;
}

void NcclTransport::issue_self_pair(Transfer& send, Transfer& recv) {
  if (send.count != recv.count) {
    throw Error(ErrorCode::kInvalidArgument, "NcclTransport: self-transfer with tag " + std::to_string(send.tag) +
                                                 " sends " + std::to_string(send.count) + " floats but receives " +
                                                 std::to_string(recv.count));
  }
  StreamEvent ready;
  ready.record(compute_stream_);
  ready.make_wait(comm_stream_);
  NcclGroup group(communicator_, "ncclGroupStart/End (self-transfer)");
  communicator_.send(static_cast<const float*>(send.data), send.count, send.peer, comm_stream_, "ncclSend (self)");
  communicator_.recv(static_cast<float*>(recv.data), recv.count, recv.peer, comm_stream_, "ncclRecv (self)");
  group.end();
  send.done.record(comm_stream_);
  recv.done.record(comm_stream_);
  send.issued = true;
  recv.issued = true;
}

std::unique_ptr<Request> NcclTransport::isend(const float* data, int64_t count, int peer, int tag) {
  check_peer("isend", count, peer);
  auto transfer = std::make_shared<Transfer>();
  transfer->is_send = true;
  transfer->data = const_cast<float*>(data);
  transfer->count = count;
  transfer->peer = peer;
  transfer->tag = tag;
  if (peer != rank()) {
    issue(*transfer);
  } else if (auto it = unmatched_self_recvs_.find(tag); it != unmatched_self_recvs_.end()) {
    issue_self_pair(*transfer, *it->second);
    unmatched_self_recvs_.erase(it);
  } else {
    unmatched_self_sends_[tag] = transfer;
  }
  return std::make_unique<NcclRequest>(*this, transfer);
}

std::unique_ptr<Request> NcclTransport::irecv(float* data, int64_t count, int peer, int tag) {
  check_peer("irecv", count, peer);
  auto transfer = std::make_shared<Transfer>();
  transfer->data = data;
  transfer->count = count;
  transfer->peer = peer;
  transfer->tag = tag;
  if (peer != rank()) {
    issue(*transfer);
  } else if (auto it = unmatched_self_sends_.find(tag); it != unmatched_self_sends_.end()) {
    issue_self_pair(*it->second, *transfer);
    unmatched_self_sends_.erase(it);
  } else {
    unmatched_self_recvs_[tag] = transfer;
  }
  return std::make_unique<NcclRequest>(*this, transfer);
}

}  // namespace sluice::comm
