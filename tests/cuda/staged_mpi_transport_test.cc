// StagedTransport over MPI with the CUDA backend's pinned staging, two ranks sharing GPU 0 (what NCCL refuses): device tensors go device -> host -> MPI
// -> device in both directions, with several transfers in flight. Run under mpirun (mpi_test, np = 2).
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <vector>

#include "core/comm/mpi_transport.h"
#include "core/comm/staged_transport.h"
#include "kernels/cuda/cuda_backend.h"
#include "tests/cuda/cuda_test_support.h"

namespace sluice::comm {
namespace {

std::vector<float> values_of(int rank, int message, int count) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) values[static_cast<size_t>(i)] = 1000.0f * rank + 100.0f * message + 0.25f * i;
  return values;
}

TEST(StagedTransportOverMpi, DeviceTensorsCrossBetweenTwoRanksSharingOneGpu) {
  SLUICE_SKIP_WITHOUT_CUDA_DEVICE();
  kernels::CudaBackend backend(0);
  MpiTransport host(MPI_COMM_WORLD);
  StagedTransport transport(host, backend.host_staging());
  ASSERT_EQ(transport.size(), 2);
  const int me = transport.rank();
  const int peer = 1 - me;
  constexpr int kMessages = 3;
  constexpr int kCount = 5000;
  std::vector<kernels::Tensor> outgoing, incoming;
  std::vector<std::unique_ptr<Request>> requests;
  for (int m = 0; m < kMessages; ++m) {
    incoming.push_back(backend.zeros(1, kCount));
    requests.push_back(transport.irecv(incoming.back().data(), kCount, peer, m));
  }
  for (int m = kMessages - 1; m >= 0; --m) {  // sent in the reverse order: tags, not order, must match them up
    const std::vector<float> values = values_of(me, m, kCount);
    outgoing.push_back(backend.from_host(1, kCount, values.data()));
    requests.push_back(transport.isend(outgoing.back().data(), kCount, peer, m));
  }
  for (auto& r : requests) r->wait();
  for (int m = 0; m < kMessages; ++m) {
    std::vector<float> received(kCount);
    backend.to_host(incoming[static_cast<size_t>(m)], received.data());
    EXPECT_EQ(received, values_of(peer, m, kCount)) << "message " << m;
  }
}

}  // namespace
}  // namespace sluice::comm
