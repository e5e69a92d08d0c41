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

// ncclGroupStart in the constructor, ncclGroupEnd in end(), or in the destructor when an exception skipped
// end(): a group left open would silently swallow every later NCCL call of this thread into it.
class NcclGroup {
 public:
  explicit NcclGroup(const char* what);
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  void end();

 private:
  const char* what_;
  bool open_ = true;
};

class NcclCommunicator {
 public:
  // Collective over `comm`; `device` is this rank's GPU (made current before ncclCommInitRank). A failure
  // before ncclCommInitRank (no unique id on rank 0, a GPU that cannot be selected on some rank) is agreed over
  // `comm` first, so it throws on every rank instead of leaving the others waiting inside NCCL. A failure inside
  // ncclCommInitRank on one rank can still leave the others waiting there (docs/GPU.md).
  NcclCommunicator(MPI_Comm comm, int device);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }

  // In-place sum over ranks on `stream`. NCCL's summation order depends on its algorithm (ring, tree) and
  // the rank count, so unlike comm::Group::start_ordered_sum this is NOT the sequential rank-order sum;
  // see docs/GPU.md for why the trainer's data-parallel sums stay ordered.
  void all_reduce_sum(float* device_data, int64_t count, cudaStream_t stream);

 private:
  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
};

}  // namespace sluice::comm
