// Makes `pipeline.transport: nccl` (and auto's nccl choice) available: linked only under --config=cuda.
#include <cuda_runtime_api.h>

#include <memory>

#include "core/comm/nccl_communicator.h"
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
        transport_(std::make_unique<comm::NcclTransport>(*communicator_, backend.stream())) {}
  int rank() const override { return transport_->rank(); }
  int size() const override { return transport_->size(); }
  std::unique_ptr<comm::Request> isend(const float* data, int64_t count, int peer, int tag) override {
    return transport_->isend(data, count, peer, tag);
  }
  std::unique_ptr<comm::Request> irecv(float* data, int64_t count, int peer, int tag) override {
    return transport_->irecv(data, count, peer, tag);
  }

 private:
  std::unique_ptr<comm::NcclCommunicator> communicator_;
  std::unique_ptr<comm::NcclTransport> transport_;  // destroyed before the communicator it uses
};

int visible_gpus() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

std::unique_ptr<comm::Transport> create(MPI_Comm pipeline_comm, kernels::Backend& backend) {
  auto* cuda = dynamic_cast<kernels::CudaBackend*>(&backend);
  if (cuda == nullptr) {
    throw Error(ErrorCode::kConfig, "pipeline.transport: nccl needs device: cuda (the backend is " +
                                        backend.device_name() + ")");
  }
  return std::make_unique<OwningNcclTransport>(pipeline_comm, *cuda);
}

const bool registered = register_nccl_support(NcclSupport{visible_gpus, create});

}  // namespace
}  // namespace sluice::runtime
