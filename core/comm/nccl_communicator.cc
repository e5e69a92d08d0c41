#include "core/comm/nccl_communicator.h"

#include <string>

#include "core/comm/mpi_context.h"
#include "core/common/error.h"

namespace sluice::comm {

void check_nccl(ncclResult_t status, const char* what) {
  if (status == ncclSuccess) return;
  throw Error(ErrorCode::kComm, std::string(what) + " failed: " + ncclGetErrorString(status));
}

NcclCommunicator::NcclCommunicator(MPI_Comm comm, int device) : device_(device) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank (NCCL setup)");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size (NCCL setup)");
  ncclUniqueId id;
  if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check_mpi(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm), "MPI_Bcast (ncclUniqueId)");
  const cudaError_t set = cudaSetDevice(device_);
  if (set != cudaSuccess) {
    throw Error(ErrorCode::kCuda, "cudaSetDevice(" + std::to_string(device_) + ") for NCCL failed: " +
                                      cudaGetErrorString(set));
  }
  check_nccl(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
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
