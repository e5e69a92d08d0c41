// Makes `pipeline.transport: nccl` and `pipeline.gradient_sum: nccl` (and auto's nccl choices) available: linked
// only under --config=cuda.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "core/comm/nccl_communicator.h"
#include "core/comm/nccl_overlapped_sum.h"
#include "core/comm/nccl_transport.h"
#include "core/common/error.h"
#include "core/runtime/nccl_support.h"
#include "kernels/cuda/cuda_backend.h"

namespace sluice::runtime {
namespace {

// NcclTransport borrows its communicator; this keeps both alive together for the trainer.
class OwningNcclTransport : public comm::Transport {
 public:
  OwningNcclTransport(MPI_Comm pipeline_comm, kernels::CudaBackend& backend)
      : communicator_(std::make_unique<comm::NcclCommunicator>(pipeline_comm, backend.device_ordinal())),
        transport_(std::make_unique<comm::NcclTransport>(*communicator_, backend.stream(),
                                                          backend.communication_stream())) {}
  int rank() const override { return transport_->rank(); }
  int size() const override { return transport_->size(); }
  std::unique_ptr<comm::Request> isend(const float* data, int64_t count, int peer, int tag) override {
    return transport_->isend(data, count, peer, tag);
  }
  std::unique_ptr<comm::Request> irecv(float* data, int64_t count, int peer, int tag) override {
    return transport_->irecv(data, count, peer, tag);
  }
  bool receives_may_be_posted_early() const override { return transport_->receives_may_be_posted_early(); }
  int max_tag() const override { return transport_->max_tag(); }

 private:
  std::unique_ptr<comm::NcclCommunicator> communicator_;
  std::unique_ptr<comm::NcclTransport> transport_;  // destroyed before the communicator it uses
};

// The data-parallel gradient sum as ncclAllReduce over the replicas of this rank's stage.
class NcclGradientReducer : public GradientReducer {
 public:
  NcclGradientReducer(MPI_Comm data_parallel_comm, kernels::CudaBackend& backend)
      : communicator_(std::make_unique<comm::NcclCommunicator>(data_parallel_comm, backend.device_ordinal())),
        sum_(std::make_unique<comm::NcclOverlappedSum>(*communicator_, backend.stream(),
                                                       backend.communication_stream())) {}
  const char* name() const override { return "nccl"; }
  void start(int stage, const std::vector<model::Parameter*>& parameters) override {
    (void)stage;  // one communicator for all of this rank's stages: their replicas are the same ranks
    std::vector<comm::NcclOverlappedSum::Buffer> buffers;
    for (model::Parameter* p : parameters) buffers.push_back({p->grad.data(), p->grad.size()});
    sum_->start(buffers);
  }
  void finish() override { sum_->finish(); }

 private:
  std::unique_ptr<comm::NcclCommunicator> communicator_;
  std::unique_ptr<comm::NcclOverlappedSum> sum_;  // destroyed before the communicator it uses
};

int visible_gpus() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

kernels::CudaBackend& cuda_backend_of(kernels::Backend& backend, const char* key) {
  auto* cuda = dynamic_cast<kernels::CudaBackend*>(&backend);
  if (cuda == nullptr) {
    throw Error(ErrorCode::kConfig, std::string(key) + ": nccl needs device: cuda (the backend is " +
                                        backend.device_name() + ")");
  }
  return *cuda;
}

std::unique_ptr<comm::Transport> create(MPI_Comm pipeline_comm, kernels::Backend& backend) {
  return std::make_unique<OwningNcclTransport>(pipeline_comm, cuda_backend_of(backend, "pipeline.transport"));
}

std::unique_ptr<GradientReducer> create_gradient_reducer(MPI_Comm data_parallel_comm, kernels::Backend& backend) {
  return std::make_unique<NcclGradientReducer>(data_parallel_comm,
                                               cuda_backend_of(backend, "pipeline.gradient_sum"));
}

const bool registered = register_nccl_support(NcclSupport{visible_gpus, create, create_gradient_reducer});

}  // namespace
}  // namespace sluice::runtime
