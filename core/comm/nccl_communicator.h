// An NCCL communicator over the ranks of an MPI communicator, one GPU per rank. Rank 0 creates the
// ncclUniqueId and broadcasts it over MPI, so no other rendezvous service is needed.
// NCCL refuses two ranks on one GPU: on hosts where ranks share a GPU use StagedTransport (pipeline.transport: staged) instead.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>

namespace sluice::comm {

// Throws sluice::Error(kComm) naming `what` and NCCL's reason when `status` is not ncclSuccess.
void check_nccl(ncclResult_t status, const char* what);

class NcclCommunicator {
 public:
  // Collective over `comm`; `device` is this rank's GPU. The communicator is created non-blocking and the
  // ranks agree on the outcome (comm::agree_on_setup): a rank whose GPU cannot be selected or whose NCCL set-up
  // fails tells the others, which abort their half-made communicators instead of waiting for it forever. Then
  // every rank throws: its own error, or one saying another rank failed.
  NcclCommunicator(MPI_Comm comm, int device);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }

  // The calls Sluice makes, each queued on `stream`; each throws Error(kComm) naming the call on failure. On a
  // non-blocking communicator NCCL may answer ncclInProgress while it still sets up a connection: they then wait
  // on the host until the call is queued (not until it is done), which is what a blocking communicator does.
  void send(const float* data, int64_t count, int peer, cudaStream_t stream, const char* what);
  void recv(float* data, int64_t count, int peer, cudaStream_t stream, const char* what);
  // In-place sum over ranks. NCCL's summation order depends on its algorithm (ring, tree) and the rank count,
  // so unlike comm::Group::start_ordered_sum this is NOT the sequential rank-order sum (docs/GPU.md).
  void all_reduce_sum(float* device_data, int64_t count, cudaStream_t stream);
  // Throws if `status` (a call's result) is an error; waits out ncclInProgress first.
  void complete(ncclResult_t status, const char* what);

 private:
  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
};

// ncclGroupStart in the constructor, ncclGroupEnd in end(), or in the destructor when an exception skipped
// end(): a group left open would silently swallow every later NCCL call of this thread into it. The group's
// calls must all be on `communicator`.
class NcclGroup {
 public:
  NcclGroup(NcclCommunicator& communicator, const char* what);
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  void end();

 private:
  NcclCommunicator& communicator_;
  const char* what_;
  bool open_ = true;
};

}  // namespace sluice::comm
