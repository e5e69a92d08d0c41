#include "core/comm/staged_mpi_transport.h"

#include <limits>
#include <string>

#include "core/comm/mpi_context.h"
#include "core/common/error.h"

namespace sluice::comm {
namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(ErrorCode::kCuda, std::string(what) + " failed: " + cudaGetErrorString(status));
  }
}

int as_int_count(int64_t count) {
  if (count < 0 || count > std::numeric_limits<int>::max()) {
    throw Error(ErrorCode::kComm, "staged MPI message of " + std::to_string(count) + " floats exceeds MPI's int count");
  }
  return static_cast<int>(count);
}

// Pinned memory: device<->host copies from it run at full PCIe/NVLink speed and need no extra staging.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(int64_t count) : count_(count) {
    if (count_ > 0) {
      check_cuda(cudaMallocHost(reinterpret_cast<void**>(&data_), static_cast<size_t>(count_) * sizeof(float)),
                 "cudaMallocHost (staging buffer)");
    }
  }
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  float* data() { return data_; }
  size_t bytes() const { return static_cast<size_t>(count_) * sizeof(float); }

 private:
  float* data_ = nullptr;
  int64_t count_;
};

class StagedRequest : public Request {
 public:
  // For a receive, `device_destination` gets the data on completion; for a send it is null.
  StagedRequest(int64_t count, float* device_destination, cudaStream_t stream)
      : staging_(count), destination_(device_destination), stream_(stream) {}

  ~StagedRequest() override {
    // An abandoned request (error path) must not complete later into freed memory.
    if (request_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&request_);
      MPI_Wait(&request_, MPI_STATUS_IGNORE);
    }
  }

  float* staging() { return staging_.data(); }
  MPI_Request* mpi_request() { return &request_; }

  void wait() override {
    if (finished_) return;
    check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait (staged)");
    finish();
  }

  bool test() override {
    if (finished_) return true;
    int done = 0;
    check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test (staged)");
    if (done) finish();
    return done != 0;
  }

 private:
  void finish() {
    if (destination_ != nullptr && staging_.bytes() > 0) {
      check_cuda(cudaMemcpyAsync(destination_, staging_.data(), staging_.bytes(), cudaMemcpyDefault, stream_),
                 "cudaMemcpyAsync (staged receive, host to device)");
      // The staging buffer dies with this request, which may be right after wait() returns.
      check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (staged receive)");
    }
    finished_ = true;
  }

  PinnedBuffer staging_;
  float* destination_;
  cudaStream_t stream_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool finished_ = false;
};

}  // namespace

StagedMpiTransport::StagedMpiTransport(MPI_Comm comm, cudaStream_t compute_stream)
    : comm_(comm), compute_stream_(compute_stream) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
}

std::unique_ptr<Request> StagedMpiTransport::isend(const float* data, int64_t count, int peer, int tag) {
  const int n = as_int_count(count);
  auto request = std::make_unique<StagedRequest>(count, nullptr, compute_stream_);
  if (count > 0) {
    check_cuda(cudaMemcpyAsync(request->staging(), data, static_cast<size_t>(count) * sizeof(float),
                               cudaMemcpyDefault, compute_stream_),
               "cudaMemcpyAsync (staged send, device to host)");
    // MPI reads the staging buffer from the host: the copy must be finished, not just queued.
    check_cuda(cudaStreamSynchronize(compute_stream_), "cudaStreamSynchronize (staged send)");
  }
  check_mpi(MPI_Isend(request->staging(), n, MPI_FLOAT, peer, tag, comm_, request->mpi_request()),
            "MPI_Isend (staged)");
  return request;
}

std::unique_ptr<Request> StagedMpiTransport::irecv(float* data, int64_t count, int peer, int tag) {
  const int n = as_int_count(count);
  auto request = std::make_unique<StagedRequest>(count, data, compute_stream_);
  check_mpi(MPI_Irecv(request->staging(), n, MPI_FLOAT, peer, tag, comm_, request->mpi_request()),
            "MPI_Irecv (staged)");
  return request;
}

}  // namespace sluice::comm
