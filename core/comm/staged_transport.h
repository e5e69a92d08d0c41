// Transport for device tensors through host memory: device -> host buffer -> host transport (MPI) -> host
// buffer -> device. For ranks that share one GPU (NCCL refuses two ranks on one GPU: a 4-rank pipeline on a
// one-GPU machine) or hosts without NCCL. It composes any host Transport with a backend's HostStaging, so it
// holds no MPI or CUDA code of its own and runs unchanged over the CPU backend's staging, which is how it is
// tested on machines without a GPU.
#pragma once

#include "core/comm/transport.h"
#include "kernels/host_staging.h"

namespace sluice::comm {

class StagedTransport : public Transport {
 public:
  // Both must outlive the transport and every request it started.
  StagedTransport(Transport& host_transport, kernels::HostStaging& staging);
  int rank() const override { return host_.rank(); }
  int size() const override { return host_.size(); }
  // Copies `data` into a fresh host buffer (complete before return, so the caller may reuse `data` at once),
  // then sends that buffer; the request owns it until the send completes.
  std::unique_ptr<Request> isend(const float* data, int64_t count, int peer, int tag) override;
  // Receives into a fresh host buffer; completion (wait(), or test() returning true) copies it to `data`.
  std::unique_ptr<Request> irecv(float* data, int64_t count, int peer, int tag) override;
  // The messages are the host transport's, so its ordering rules are the rules.
  bool receives_may_be_posted_early() const override { return host_.receives_may_be_posted_early(); }
  int max_tag() const override { return host_.max_tag(); }

 private:
  Transport& host_;
  kernels::HostStaging& staging_;
};

}  // namespace sluice::comm
