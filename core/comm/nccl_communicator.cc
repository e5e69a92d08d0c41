#include "core/comm/nccl_communicator.h"

#include <string>
#include <thread>

#include "core/comm/mpi_context.h"
#include "core/comm/setup_agreement.h"
#include "core/common/error.h"

namespace sluice::comm {

void check_nccl(ncclResult_t status, const char* what) {
  if (status == ncclSuccess) return;
  throw Error(ErrorCode::kComm, std::string(what) + " failed: " + ncclGetErrorString(status));
}

NcclGroup::NcclGroup(NcclCommunicator& communicator, const char* what) : communicator_(communicator), what_(what) {
  check_nccl(ncclGroupStart(), what_);
}

NcclGroup::~NcclGroup() {
  if (open_) ncclGroupEnd();  // only after an exception; its error is the one already in flight
}

void NcclGroup::end() {
  open_ = false;
  communicator_.complete(ncclGroupEnd(), what_);
}

NcclCommunicator::NcclCommunicator(MPI_Comm comm, int device) : device_(device) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank (NCCL setup)");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size (NCCL setup)");
  // Rank 0's id and whether it could make one travel together: a failure there must reach every rank.
  struct {
    int status = ncclSuccess;
    ncclUniqueId id;
  } root;
  if (rank_ == 0) root.status = ncclGetUniqueId(&root.id);
  check_mpi(MPI_Bcast(&root, sizeof(root), MPI_BYTE, 0, comm), "MPI_Bcast (ncclUniqueId)");
  if (root.status != ncclSuccess) {
    throw Error(ErrorCode::kComm, std::string("ncclGetUniqueId failed on rank 0 of the NCCL communicator: ") +
                                      ncclGetErrorString(static_cast<ncclResult_t>(root.status)));
  }

  // The set-up, polled by agree_on_setup: select the GPU and start a non-blocking init on the first poll, then
  // ask NCCL how the init is going.
  std::string failure;
  bool started = false;
  const auto poll = [&]() -> SetupState {
    ncclResult_t state = ncclSuccess;
    if (!started) {
      started = true;
      const cudaError_t set = cudaSetDevice(device_);
      if (set != cudaSuccess) {
        failure = "cudaSetDevice(" + std::to_string(device_) + ") for NCCL failed: " + cudaGetErrorString(set);
        return SetupState::kFailed;
      }
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 0;
      state = ncclCommInitRankConfig(&comm_, size_, root.id, rank_, &config);
    } else {
      const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query != ncclSuccess) state = query;
    }
    if (state == ncclInProgress) return SetupState::kInProgress;
    if (state == ncclSuccess) return SetupState::kDone;
    failure = std::string("ncclCommInitRankConfig failed: ") + ncclGetErrorString(state);
    return SetupState::kFailed;
  };
  const auto abort = [&] {
    if (comm_ != nullptr) ncclCommAbort(comm_);
    comm_ = nullptr;
  };
  if (!agree_on_setup(comm, poll, abort)) {
    abort();  // a communicator that was made here but is useless without the others
    if (!failure.empty()) throw Error(ErrorCode::kComm, failure);
    throw Error(ErrorCode::kComm, "NCCL communicator set-up failed on another rank (rank " + std::to_string(rank_) +
                                      " of " + std::to_string(size_) + " aborted its own)");
  }
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

void NcclCommunicator::complete(ncclResult_t status, const char* what) {
  while (status == ncclInProgress) {
    std::this_thread::yield();
    const ncclResult_t query = ncclCommGetAsyncError(comm_, &status);
    if (query != ncclSuccess) status = query;
  }
  check_nccl(status, what);
}

void NcclCommunicator::send(const float* data, int64_t count, int peer, cudaStream_t stream, const char* what) {
  complete(ncclSend(data, static_cast<size_t>(count), ncclFloat32, peer, comm_, stream), what);
}

void NcclCommunicator::recv(float* data, int64_t count, int peer, cudaStream_t stream, const char* what) {
  complete(ncclRecv(data, static_cast<size_t>(count), ncclFloat32, peer, comm_, stream), what);
}

void NcclCommunicator::all_reduce_sum(float* device_data, int64_t count, cudaStream_t stream) {
  if (count < 0) throw Error(ErrorCode::kInvalidArgument, "all_reduce_sum: negative count " + std::to_string(count));
  complete(ncclAllReduce(device_data, device_data, static_cast<size_t>(count), ncclFloat32, ncclSum, comm_, stream),
           "ncclAllReduce");
}

}  // namespace sluice::comm
