#include "core/comm/nccl_communicator.h"

#include <string>

#include "core/comm/mpi_context.h"
#include "core/common/error.h"

namespace sluice::comm {

void check_nccl(ncclResult_t status, const char* what) {
  if (status == ncclSuccess) return;
  throw Error(ErrorCode::kComm, std::string(what) + " failed: " + ncclGetErrorString(status));
}

NcclGroup::NcclGroup(const char* what) : what_(what) { check_nccl(ncclGroupStart(), what_); }

NcclGroup::~NcclGroup() {
  if (open_) ncclGroupEnd();  // only after an exception; its error is the one already in flight
}

void NcclGroup::end() {
  open_ = false;
  check_nccl(ncclGroupEnd(), what_);
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
  const cudaError_t set = cudaSetDevice(device_);
  int selected = set == cudaSuccess ? 1 : 0;
  int everywhere = 0;
  check_mpi(MPI_Allreduce(&selected, &everywhere, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce (NCCL setup)");
  if (set != cudaSuccess) {
    throw Error(ErrorCode::kCuda, "cudaSetDevice(" + std::to_string(device_) + ") for NCCL failed: " +
                                      cudaGetErrorString(set));
  }
  if (everywhere == 0) {
    throw Error(ErrorCode::kCuda, "another rank of the NCCL communicator could not select its GPU");
  }
  check_nccl(ncclCommInitRank(&comm_, size_, root.id, rank_), "ncclCommInitRank");
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

void NcclCommunicator::all_reduce_sum(float* device_data, int64_t count, cudaStream_t stream) {
  if (count < 0) throw Error(ErrorCode::kInvalidArgument, "all_reduce_sum: negative count " + std::to_string(count));
  check_nccl(ncclAllReduce(device_data, device_data, static_cast<size_t>(count), ncclFloat32, ncclSum, comm_, stream),
             "ncclAllReduce");
}

}  // namespace sluice::comm
